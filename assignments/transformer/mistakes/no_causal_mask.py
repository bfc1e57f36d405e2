"""No causal mask in the language model: every position reads the future.

Your TinyCausalLM runs its blocks without the causal mask, so position t attends to tokens
after t. In teacher-forced training the whole sequence is given at once, so the model can
simply read the next token instead of predicting it, and it fails at generation time where the
future does not exist yet. Build blocked = triu(ones(T, T), diagonal=1) (True = blocked) and pass
it to every block. The course's check: change a suffix, earlier logits must not move.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_causality", "hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('blocked = torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(diagonal=1)\n'
  'x = self.embedding(tokens) * math.sqrt(self.d_model)\n'
  'x = x + self.positions[:T].to(x.dtype)\n',
  'x = self.embedding(tokens) * math.sqrt(self.d_model) + '
  'self.positions[:T].to(self.embedding.weight.dtype)\n'),
 ('x = block(x, mask=blocked)\n', 'x = block(x)\n')]
