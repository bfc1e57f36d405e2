"""the cache writes new positions at index 0: earlier entries are overwritten.

Your cache, a buffer of max_len positions, writes every update at the start of the buffer instead of after the t
positions already stored: the keys of earlier positions are overwritten, so later tokens attend to the wrong past.
Write the n new positions at [t, t + n) and advance t (the past never changes).
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_cache_update_appends",
    "hidden/test_cache.py::test_cache_never_changes_earlier_entries",
]


class KVCache:
    def __init__(self, n_layers, max_len):
        self.max_len = max_len
        self._k = [None] * n_layers
        self._v = [None] * n_layers
        self._t = [0] * n_layers

    @property
    def keys(self):
        return [None if b is None else b[:, :t] for b, t in zip(self._k, self._t)]

    @property
    def values(self):
        return [None if b is None else b[:, :t] for b, t in zip(self._v, self._t)]

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
        self._k[layer][:, :n] = k
        self._v[layer][:, :n] = v
        self._t[layer] = t + n
        return self._k[layer][:, : t + n], self._v[layer][:, : t + n]
