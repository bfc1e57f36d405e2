"""the cache's update shifts its stored tensors in place: K and V returned earlier change afterwards.

Your KVCache keeps the positions right-aligned in one buffer per layer and shifts the stored ones left, in place, to
make room for each update, returning a view of the buffer: so the (K, V) an update returned change when a later
update writes into the same memory (forward uses them at once, so generation still works, but anything that keeps
them, such as attention weights recorded for a plot or a beam search holding several continuations, sees other keys
than it was given). update must never change the stored entries: append into new tensors (torch.cat), or write each
new position into a buffer at an index no earlier returned view covers.
"""
CAUGHT_BY = ["hidden/test_cache.py::test_cache_returns_stay_valid"]
PATCH = [('def __init__(self, n_layers: int, max_len: int):\n',
  'def __init__(self, n_layers: int, max_len: int):\n'
  '    self.max_len = max_len\n'
  '    self._k = [None] * n_layers\n'
  '    self._v = [None] * n_layers\n'
  '    self._t = [0] * n_layers\n'
  '\n'
  '@property\n'
  'def keys(self):\n'
  '    return [None if b is None else b[:, self.max_len - t:] for b, t in zip(self._k, self._t)]\n'
  '\n'
  '@property\n'
  'def values(self):\n'
  '    return [None if b is None else b[:, self.max_len - t:] for b, t in zip(self._v, self._t)]\n'),
 ('self.max_len = max_len\nself.keys = [None] * n_layers\nself.values = [None] * n_layers\n', ''),
 ('return 0 if self.keys[0] is None else self.keys[0].shape[1]\n', 'return self._t[0]\n'),
 ('stored = 0 if self.keys[layer] is None else self.keys[layer].shape[1]\n'
  'if stored + k.shape[1] > self.max_len:\n'
  '    raise ValueError(f"the cache holds at most max_len={self.max_len} positions; "\n'
  '                     f"{stored} are stored and {k.shape[1]} more were given")\n'
  'if self.keys[layer] is None:\n'
  '    self.keys[layer], self.values[layer] = k, v\n'
  'else:\n'
  '    self.keys[layer] = torch.cat([self.keys[layer], k], dim=1)\n'
  '    self.values[layer] = torch.cat([self.values[layer], v], dim=1)\n'
  'return self.keys[layer], self.values[layer]\n',
  'B, n, d = k.shape\n'
  't = self._t[layer]\n'
  'if t + n > self.max_len:\n'
  '    raise ValueError(f"the cache holds at most max_len={self.max_len} positions")\n'
  'if self._k[layer] is None:\n'
  '    self._k[layer] = k.new_zeros(B, self.max_len, d)\n'
  '    self._v[layer] = v.new_zeros(B, self.max_len, d)\n'
  'for buffer, new in ((self._k[layer], k), (self._v[layer], v)):\n'
  '    buffer[:, : self.max_len - n] = buffer[:, n:].clone()   # shift the stored positions left, in place\n'
  '    buffer[:, self.max_len - n:] = new                      # the new ones at the right end\n'
  'self._t[layer] = t + n\n'
  'return self._k[layer][:, self.max_len - t - n:], self._v[layer][:, self.max_len - t - n:]\n')]
