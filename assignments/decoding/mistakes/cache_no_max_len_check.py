"""the cache grows past max_len without an error.

Your KVCache accepted more positions than max_len: there is no position (and, in a real model, no memory budget)
for them, and the failure shows up later as a confusing shape error or a silently wrong position. Check
t + n > max_len in update, before storing anything, and raise ValueError saying max_len.
"""
CAUGHT_BY = ["hidden/test_cache.py::test_cache_max_len_raises"]


class KVCache(KVCache):  # noqa: F811 - the reference's, without its check
    def update(self, layer, k, v):
        if self.keys[layer] is None:
            self.keys[layer], self.values[layer] = k, v
        else:
            self.keys[layer] = torch.cat([self.keys[layer], k], dim=1)
            self.values[layer] = torch.cat([self.values[layer], v], dim=1)
        return self.keys[layer], self.values[layer]
