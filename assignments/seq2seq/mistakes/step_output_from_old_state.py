"""step computes the logits from the old decoder state.

Your logits come from the state BEFORE the cell update. The decoder first reads the previous
token (state = cell(cat[emb(tok), context], state)), and only the NEW state, with a context
attended from it, knows what to write now: logits = out(cat[new_state, attend(new_state, enc)]).
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_step_matches_reference",
    "hidden/test_model.py::test_forward_matches_reference",
    "hidden/test_model.py::test_generate_matches_reference",
]
PATCH = [('state = self.cell(torch.cat([self.emb(tok), context], dim=1), state)\ncontext, _ = attend(state, enc)\n',
  'new_state = self.cell(torch.cat([self.emb(tok), context], dim=1), state)\n'),
 ('return logits, state\n', 'return logits, new_state\n')]
