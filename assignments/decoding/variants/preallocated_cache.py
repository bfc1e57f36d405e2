"""a preallocated cache: one (B, max_len, d) buffer per layer and a write index (the way serving systems do it)."""


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
            raise ValueError(f"KVCache is full: max_len={self.max_len}, {t} stored, {n} more")
        if self._k[layer] is None:
            self._k[layer] = k.new_zeros(B, self.max_len, d)
            self._v[layer] = v.new_zeros(B, self.max_len, d)
        self._k[layer][:, t:t + n] = k
        self._v[layer][:, t:t + n] = v
        self._t[layer] = t + n
        return self._k[layer][:, : t + n], self._v[layer][:, : t + n]
