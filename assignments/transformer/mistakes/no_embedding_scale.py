"""Embeddings not multiplied by sqrt(d_model) before the positions are added.

Your model adds the positional table to embedding(tokens) directly. The contract (and the course's
model) scales the embeddings first: x = embedding(tokens) * sqrt(d_model) + PE[:T], so that token
identity is not swamped by the positional signal, whose entries are of size 1.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('blocked = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(diagonal=1)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model)\n'
  'x = x + self.positions[:T].to(x.dtype)\n',
  'blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)\n'
  'x = self.embedding(tokens) + self.positions[:T].to(self.embedding.weight.dtype)\n')]
