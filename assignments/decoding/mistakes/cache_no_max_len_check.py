"""the cache grows past max_len without an error.

Your KVCache accepted more positions than max_len: there is no position (and, in a real model, no memory budget)
for them, and the failure shows up later as a confusing shape error or a silently wrong position. Check
t + n > max_len in update, before storing anything, and raise ValueError saying max_len.
"""
CAUGHT_BY = ["hidden/test_cache.py::test_cache_max_len_raises"]
PATCH = [('stored = 0 if self.keys[layer] is None else self.keys[layer].shape[1]\n'
  'if stored + k.shape[1] > self.max_len:\n'
  '    raise ValueError(f"the cache holds at most max_len={self.max_len} positions; "\n'
  '                     f"{stored} are stored and {k.shape[1]} more were given")\n',
  '')]
