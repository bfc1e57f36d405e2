"""No check of the sequence length against max_len.

Your forward pass does not raise ValueError when T > max_len; it either crashes with a shape error
deep inside (the positional table has only max_len rows) or silently computes positions it was
never built for. Check the length first and raise a ValueError that says what went wrong.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_too_long_raises"]
PATCH = [('if T > self.max_len:\n'
  '    raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")\n'
  'blocked = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(diagonal=1)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model)\n'
  'x = x + self.positions[:T].to(x.dtype)\n',
  'blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model) + '
  'self.positions[:T].to(self.embedding.weight.dtype)\n')]
