"""the cache is remembered per model (per params object) across calls to generate.

Your generate reused the cache of an earlier call made with the same params dict: the cache was memoised per model
(a dict keyed on id(params), an attribute set on the model), so the second call's prompt sits after the first
call's tokens (wrong positions, attention to another sequence's keys) and the cache soon overflows. A cache holds
one sequence: create a new KVCache inside generate on every call.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_fresh_cache_each_call"]
PATCH = [('tokens, steps = prompt, []\n'
  'cache = KVCache(n_layers_of(params), max_len) if use_cache else None\n'
  'feed = prompt\n',
  'cache = None\n'
  'if use_cache:\n'
  '    memo = _caches.get(id(params))\n'
  '    if memo is None or memo[0] is not params:\n'
  '        memo = _caches[id(params)] = (params, KVCache(n_layers_of(params), max_len))\n'
  '    cache = memo[1]\n'
  'tokens, steps, feed = prompt, [], prompt\n'),
 ('if use_cache:\n'
  '    last = forward(params, feed, cache)[:, -1]\n'
  'else:\n'
  '    last = forward(params, tokens)[:, -1]\n',
  'last = (forward(params, feed, cache) if use_cache else forward(params, tokens))[:, -1]\n'),
 ('logits = torch.stack(steps, dim=1) if steps else params["head"].new_zeros(B, 0, V)\n'
  'return tokens, logits\n',
  'return tokens, torch.stack(steps, dim=1) if steps else params["head"].new_zeros(B, 0, V)\n'),
 ('def generate(params: dict, prompt: torch.Tensor, n_new: int, temperature: float = 1.0, top_k: int = '
  'None,\n',
  '_caches = {}  # id(params) -> (params, cache); params is kept so that its id cannot be reused by another '
  'dict\n'
  '\n'
  '\n'
  'def generate(params: dict, prompt: torch.Tensor, n_new: int, temperature: float = 1.0, top_k: int = '
  'None,\n')]
