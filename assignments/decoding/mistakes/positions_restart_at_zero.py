"""cached steps restart the positions at 0.

Your cached steps add positions[0:T] to the new tokens, as if each step were the start of the sequence. With a cache,
the new tokens are positions t0 .. t0 + T - 1 where t0 = len(cache) (the number already stored): add
positions[t0:t0 + T]. Recomputation gets this right by construction; a cache must keep count.
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_cached_forward_equals_recompute",
    "hidden/test_generate.py::test_greedy_matches_reference",
    "hidden/test_generate.py::test_sampled_cache_equals_recompute",
]
PATCH = [('x = params["embedding"][tokens] + params["positions"][start:start + T]\n',
  'x = params["embedding"][tokens] + params["positions"][:T]\n')]
