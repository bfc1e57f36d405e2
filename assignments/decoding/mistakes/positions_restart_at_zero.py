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


def forward(params, tokens, cache=None):
    B, T = tokens.shape
    start = 0 if cache is None else len(cache)
    max_len = params["positions"].shape[0]
    if start + T > max_len:
        raise ValueError(f"positions {start}..{start + T - 1} do not fit max_len={max_len}")
    x = params["embedding"][tokens] + params["positions"][:T]
    mask = causal_mask(T, start + T)
    for layer in range(n_layers_of(params)):
        w = {name: params[f"layers.{layer}.{name}"] for name in ("w_q", "w_k", "w_v", "w_o")}
        q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]
        if cache is not None:
            k, v = cache.update(layer, k, v)
        out, _ = one_head_attention(q, k, v, mask)
        x = x + out @ w["w_o"]
    return x @ params["head"]
