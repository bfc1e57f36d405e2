"""the causal mask for new queries against a cache aligned to the wrong end.

Your causal_mask(n_q, n_k) lines the queries up with the FIRST keys (torch.ones(n_q, n_k).triu(1)): correct when
n_q = n_k, but against a cache the queries are the LAST n_q positions. A single new token then sees only the oldest
key instead of the whole prefix. Query i sits at position n_k - n_q + i: block key j when j > n_k - n_q + i
(triu(diagonal=n_k - n_q + 1)); a one-token query blocks nothing.
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_causal_mask_matches_reference",
    "hidden/test_cache.py::test_cached_forward_equals_recompute",
    "hidden/test_generate.py::test_greedy_matches_reference",
]
PATCH = [('if n_q > n_k:\n'
  '    raise ValueError(f"{n_q} queries cannot be the last positions of {n_k} keys")\n'
  'query_pos = torch.arange(n_k - n_q, n_k)[:, None]\n'
  'key_pos = torch.arange(n_k)[None, :]\n'
  'return key_pos > query_pos\n',
  'return torch.ones(n_q, n_k, dtype=torch.bool).triu(diagonal=1)\n')]
