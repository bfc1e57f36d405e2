"""no causal mask in the forward pass: each position sees the future.

Without a cache your forward pass lets position t attend to later tokens: no mask was passed to attend. For a
single new token against a cache nothing needs blocking, but the prompt (and any recomputation) does: pass
causal_mask(T, t0 + T) to one_head_attention in every layer.
"""
CAUGHT_BY = [
    "hidden/test_cache.py::test_forward_matches_reference",
    "hidden/test_generate.py::test_greedy_matches_reference",
]


def forward(params, tokens, cache=None):
    B, T = tokens.shape
    start = 0 if cache is None else len(cache)
    max_len = params["positions"].shape[0]
    if start + T > max_len:
        raise ValueError(f"positions {start}..{start + T - 1} do not fit max_len={max_len}")
    x = params["embedding"][tokens] + params["positions"][start:start + T]
    for layer in range(n_layers_of(params)):
        w = {name: params[f"layers.{layer}.{name}"] for name in ("w_q", "w_k", "w_v", "w_o")}
        q, k, v = x @ w["w_q"], x @ w["w_k"], x @ w["w_v"]
        if cache is not None:
            k, v = cache.update(layer, k, v)
        out, _ = one_head_attention(q, k, v)
        x = x + out @ w["w_o"]
    return x @ params["head"]
