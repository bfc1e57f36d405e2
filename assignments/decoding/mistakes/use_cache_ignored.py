"""generate recomputes the whole prefix even with use_cache=True.

With use_cache=True your generate never reads a cache: each step recomputes the keys and values of the whole
sequence, so the tokens are right but each step costs O(t²) instead of O(t), and generating n tokens costs O(n³).
With the cache, feed the prompt once, then only the token just drawn: its single query attends to the keys and
values cache.update returns, one (B, 1, t) score row.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_reads_the_cache"]

_reference_generate = generate


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    return _reference_generate(params, prompt, n_new, temperature, top_k, top_p, generator, use_cache=False)
