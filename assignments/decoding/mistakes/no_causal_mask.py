"""no causal mask in the forward pass: each position sees the future.

Without a cache your forward pass lets position t attend to later tokens: no mask was passed to attend. For a
single new token against a cache nothing needs blocking, but the prompt (and any recomputation) does: pass
causal_mask(T, t0 + T) to one_head_attention in every layer.
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_forward_matches_reference",
    "hidden/test_generate.py::test_greedy_matches_reference",
]
PATCH = [('mask = causal_mask(T, start + T)\n', ''),
 ('out, _ = one_head_attention(q, k, v, mask)\n', 'out, _ = one_head_attention(q, k, v)\n')]
