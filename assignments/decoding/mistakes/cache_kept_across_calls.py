"""the cache is kept across calls to generate.

A second call to generate continued from the first one's cache: the cache was created once (at module level, or
as a default argument) and never emptied, so the new prompt sits after the old tokens (wrong positions, attention
to another sequence's keys) and the cache soon overflows. Create a new KVCache inside generate, on every call.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_fresh_cache_each_call"]

_shared_cache = None


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    global _shared_cache
    B, T0 = prompt.shape
    max_len = params["positions"].shape[0]
    if T0 + n_new > max_len:
        raise ValueError(f"prompt of {T0} tokens + {n_new} new ones is longer than max_len={max_len}")
    if use_cache and _shared_cache is None:
        _shared_cache = KVCache(n_layers_of(params), max_len)
    cache = _shared_cache if use_cache else None
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
