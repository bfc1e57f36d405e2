"""Positional encoding not added: the model sees a set of tokens, not a sequence.

Your forward pass never adds PE[:T] to the scaled embeddings. Attention by itself is blind to order
(the course's "dog bites man" and "man bites dog" give identical outputs); only the causal mask
gives any order information then. Add the sinusoidal table: x = embedding(tokens) * sqrt(d_model) + PE[:T].
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('blocked = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(diagonal=1)\n',
  'blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)\n'),
 ('x = x + self.positions[:T].to(x.dtype)\n', '')]
