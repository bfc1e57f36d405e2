"""the cache's update shifts its stored tensors in place: K and V returned earlier change afterwards.

Your KVCache keeps the positions right-aligned in one buffer per layer and shifts the stored ones left, in place, to
make room for each update, returning a view of the buffer: so the (K, V) an update returned change when a later
update writes into the same memory (forward uses them at once, so generation still works, but anything that keeps
them, such as attention weights recorded for a plot or a beam search holding several continuations, sees other keys
than it was given). update must never change the stored entries: append into new tensors (torch.cat), or write each
new position into a buffer at an index no earlier returned view covers.
"""
CAUGHT_BY = ["hidden/test_cache.py::test_cache_returns_stay_valid"]


class KVCache:
    def __init__(self, n_layers, max_len):
        self.max_len = max_len
        self._k = [None] * n_layers
        self._v = [None] * n_layers
        self._t = [0] * n_layers

    @property
    def keys(self):
        return [None if b is None else b[:, self.max_len - t:] for b, t in zip(self._k, self._t)]

    @property
    def values(self):
        return [None if b is None else b[:, self.max_len - t:] for b, t in zip(self._v, self._t)]

    def __len__(self):
        return self._t[0]

    def update(self, layer, k, v):
        B, n, d = k.shape
        t = self._t[layer]
        if t + n > self.max_len:
            raise ValueError(f"the cache holds at most max_len={self.max_len} positions")
        if self._k[layer] is None:
            self._k[layer] = k.new_zeros(B, self.max_len, d)
            self._v[layer] = v.new_zeros(B, self.max_len, d)
        for buffer, new in ((self._k[layer], k), (self._v[layer], v)):
            buffer[:, : self.max_len - n] = buffer[:, n:].clone()   # shift the stored positions left, in place
            buffer[:, self.max_len - n:] = new                      # the new ones at the right end
        self._t[layer] = t + n
        return self._k[layer][:, self.max_len - t - n:], self._v[layer][:, self.max_len - t - n:]
