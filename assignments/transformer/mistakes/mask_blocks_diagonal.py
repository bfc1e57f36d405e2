"""Causal mask that also blocks the diagonal: a position cannot see its own token.

Your causal mask is triu(ones(T, T), diagonal=0), which blocks key t for query t as well as the
future. A position may look at itself and everything before it; only keys j > i are blocked:
triu(ones(T, T), diagonal=1). With the diagonal blocked, the first position has no key at all
and every position loses the most useful token for predicting the next one.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('blocked = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(diagonal=1)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model)\n'
  'x = x + self.positions[:T].to(x.dtype)\n',
  'blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=0)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model) + '
  'self.positions[:T].to(self.embedding.weight.dtype)\n')]
