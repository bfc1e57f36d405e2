"""generate does not check max_len: a request one token too long runs anyway.

generate returned normally for a prompt plus new tokens longer than max_len (the last token is drawn but never fed,
so nothing failed). The output must fit the position table: raise ValueError up front when T0 + n_new > max_len,
before any work, with and without the cache.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_too_long_raises"]


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    B, T0 = prompt.shape
    cache = KVCache(n_layers_of(params), params["positions"].shape[0]) if use_cache else None
    tokens, steps, feed = prompt, [], prompt
    with torch.no_grad():
        for _ in range(n_new):
            last = (forward(params, feed, cache) if use_cache else forward(params, tokens))[:, -1]
            token = sample_next(last, temperature, top_k, top_p, generator)
            steps.append(last)
            feed = token[:, None].to(prompt.dtype)
            tokens = torch.cat([tokens, feed], dim=1)
    V = params["head"].shape[1]
    return tokens, torch.stack(steps, dim=1) if steps else params["head"].new_zeros(B, 0, V)
