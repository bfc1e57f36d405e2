"""step attends only once and reuses the old context for the output.

Your logits use the context computed from the OLD state. step attends twice: once with the old
state (what the cell reads) and once with the new state (what the output layer reads), because
after reading tok the decoder wants to look somewhere else: at the next digit to copy.
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_step_matches_reference",
    "hidden/test_model.py::test_forward_matches_reference",
]
PATCH = [('context, _ = attend(state, enc)\n'
  'logits = self.out(torch.cat([state, context], dim=1))\n'
  'return logits, state\n',
  'return self.out(torch.cat([state, context], dim=1)), state  # stale context\n')]
