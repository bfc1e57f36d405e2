"""attend normalises over the batch instead of over the encoder positions.

Your weights do not sum to 1 over the T encoder positions: the softmax ran over dim=0 (the
batch). Each decoder state chooses WHERE to look among its own sequence's T positions, so
the softmax must run over dim=1 of the (B, T) scores.
"""
CAUGHT_BY = [
    "hidden/test_attend.py::test_attend_matches_reference",
    "hidden/test_attend.py::test_attend_is_a_convex_combination",
    "hidden/test_model.py::test_step_matches_reference",
]
PATCH = [('h = enc.shape[-1]\n'
  'scores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / math.sqrt(h)\n'
  'weights = torch.softmax(scores, dim=1)\n'
  'context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)\n'
  'return context, weights\n',
  'scores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / math.sqrt(enc.shape[-1])  # (B, T)\n'
  'weights = torch.softmax(scores, dim=0)  # over the batch: wrong\n'
  'return torch.bmm(weights.unsqueeze(1), enc).squeeze(1), weights\n')]
