"""attend averages the query instead of the encoder states.

Your context is built from the query, not from enc. In this attention the encoder states are
both the keys (what is scored) and the values (what is averaged): context = Σ_t w_t enc[:, t],
a convex combination of the encoder states, so it always lies inside their range.
"""
CAUGHT_BY = [
    "hidden/test_attend.py::test_attend_matches_reference",
    "hidden/test_attend.py::test_attend_is_a_convex_combination",
    "hidden/test_model.py::test_step_matches_reference",
]
PATCH = [('h = enc.shape[-1]\nscores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / math.sqrt(h)\n',
  'scores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / math.sqrt(enc.shape[-1])  # (B, T)\n'),
 ('context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)\n',
  'context = (weights.unsqueeze(2) * query.unsqueeze(1)).sum(dim=1)  # (B, h): just the query again\n')]
