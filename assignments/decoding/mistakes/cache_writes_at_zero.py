"""the cache writes new positions at index 0: earlier entries are overwritten.

Your cache, a buffer of max_len positions, writes every update at the start of the buffer instead of after the t
positions already stored: the keys of earlier positions are overwritten, so later tokens attend to the wrong past.
Write the n new positions at [t, t + n) and advance t (the past never changes).
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_cache_update_appends",
    "hidden/test_cache.py::test_cache_never_changes_earlier_entries",
]
PATCH = [('def __init__(self, n_layers: int, max_len: int):\n',
  'def __init__(self, n_layers: int, max_len: int):\n'
  '    self.max_len = max_len\n'
  '    self._k = [None] * n_layers\n'
  '    self._v = [None] * n_layers\n'
  '    self._t = [0] * n_layers\n'
  '\n'
  '@property\n'
  'def keys(self):\n'
  '    return [None if b is None else b[:, :t] for b, t in zip(self._k, self._t)]\n'
  '\n'
  '@property\n'
  'def values(self):\n'
  '    return [None if b is None else b[:, :t] for b, t in zip(self._v, self._t)]\n'),
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
  'self._k[layer][:, :n] = k\n'
  'self._v[layer][:, :n] = v\n'
  'self._t[layer] = t + n\n'
  'return self._k[layer][:, : t + n], self._v[layer][:, : t + n]\n')]
