"""attend without the 1/sqrt(h) scaling.

Your attention weights are too peaked: the scores enc · query were not divided by sqrt(h).
A dot product of two h-dimensional vectors grows like sqrt(h), so without the scaling the
softmax saturates and its gradients vanish as the hidden size grows. Divide the scores by
sqrt(h), h = enc.shape[-1], before the softmax.
"""
CAUGHT_BY = [
    "hidden/test_attend.py::test_attend_matches_reference",
    "hidden/test_model.py::test_step_matches_reference",
    "hidden/test_model.py::test_forward_matches_reference",
]
PATCH = [('h = enc.shape[-1]\nscores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / math.sqrt(h)\n',
  'scores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2)  # (B, T), no 1/sqrt(h)\n'),
 ('context = torch.bmm(weights.unsqueeze(1), enc).squeeze(1)\nreturn context, weights\n',
  'return torch.bmm(weights.unsqueeze(1), enc).squeeze(1), weights\n')]
