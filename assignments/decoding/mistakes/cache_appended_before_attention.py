"""the new keys appended twice: the token attends to itself twice.

Your cached step's query attends to one key too many: the new token's key and value were stored in the cache AND
concatenated to what the cache returned, so the new position appears twice (and in the prompt every key is
doubled). cache.update(layer, k, v) already returns the stored keys followed by the new ones: attend to exactly that.
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_cached_forward_equals_recompute",
    "hidden/test_cache.py::test_forward_reads_the_cache",
    "hidden/test_generate.py::test_generate_reads_the_cache",
]
PATCH = [('mask = causal_mask(T, start + T)\n', ''),
 ('k, v = cache.update(layer, k, v)\n',
  'cache.update(layer, k, v)\n'
  'k = torch.cat([cache.keys[layer], k], dim=1)\n'
  'v = torch.cat([cache.values[layer], v], dim=1)\n'),
 ('out, _ = one_head_attention(q, k, v, mask)\n',
  'out, _ = one_head_attention(q, k, v, causal_mask(T, k.shape[1]))\n')]
