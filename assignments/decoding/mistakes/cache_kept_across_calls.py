"""the cache is kept across calls to generate.

A second call to generate continued from the first one's cache: the cache was created once (at module level, or
as a default argument) and never emptied, so the new prompt sits after the old tokens (wrong positions, attention
to another sequence's keys) and the cache soon overflows. Create a new KVCache inside generate, on every call.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_fresh_cache_each_call"]
PATCH = [('B, T0 = prompt.shape\n', 'global _shared_cache\nB, T0 = prompt.shape\n'),
 ('tokens, steps = prompt, []\n'
  'cache = KVCache(n_layers_of(params), max_len) if use_cache else None\n'
  'feed = prompt\n',
  'if use_cache and _shared_cache is None:\n'
  '    _shared_cache = KVCache(n_layers_of(params), max_len)\n'
  'cache = _shared_cache if use_cache else None\n'
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
  '_shared_cache = None\n'
  '\n'
  '\n'
  'def generate(params: dict, prompt: torch.Tensor, n_new: int, temperature: float = 1.0, top_k: int = '
  'None,\n')]
