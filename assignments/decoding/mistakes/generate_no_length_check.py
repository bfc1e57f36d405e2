"""generate does not check max_len: a request one token too long runs anyway.

generate returned normally for a prompt plus new tokens longer than max_len (the last token is drawn but never fed,
so nothing failed). The output must fit the position table: raise ValueError up front when T0 + n_new > max_len,
before any work, with and without the cache.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_too_long_raises"]
PATCH = [('max_len = params["positions"].shape[0]\n'
  'if T0 + n_new > max_len:\n'
  'raise ValueError(f"prompt of {T0} tokens + {n_new} new ones is longer than max_len={max_len}")\n'
  'tokens, steps = prompt, []\n'
  'cache = KVCache(n_layers_of(params), max_len) if use_cache else None\n'
  'feed = prompt\n',
  'cache = KVCache(n_layers_of(params), params["positions"].shape[0]) if use_cache else None\n'
  'tokens, steps, feed = prompt, [], prompt\n'),
 ('if use_cache:\nlast = forward(params, feed, cache)[:, -1]\nelse:\nlast = forward(params, tokens)[:, -1]\n',
  'last = (forward(params, feed, cache) if use_cache else forward(params, tokens))[:, -1]\n'),
 ('logits = torch.stack(steps, dim=1) if steps else params["head"].new_zeros(B, 0, V)\n'
  'return tokens, logits\n',
  'return tokens, torch.stack(steps, dim=1) if steps else params["head"].new_zeros(B, 0, V)\n')]
