"""the cache is remembered per model (per params object) across calls to generate.

Your generate reused the cache of an earlier call made with the same params dict: the cache was memoised per model
(a dict keyed on id(params), an attribute set on the model), so the second call's prompt sits after the first
call's tokens (wrong positions, attention to another sequence's keys) and the cache soon overflows. A cache holds
one sequence: create a new KVCache inside generate on every call.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_fresh_cache_each_call"]

_caches = {}  # id(params) -> (params, cache); params is kept so that its id cannot be reused by another dict


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    B, T0 = prompt.shape
    max_len = params["positions"].shape[0]
    if T0 + n_new > max_len:
        raise ValueError(f"prompt of {T0} tokens + {n_new} new ones is longer than max_len={max_len}")
    cache = None
    if use_cache:
        memo = _caches.get(id(params))
        if memo is None or memo[0] is not params:
            memo = _caches[id(params)] = (params, KVCache(n_layers_of(params), max_len))
        cache = memo[1]
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
