"""lm_loss reshapes with the course's constant VOCAB = 8 instead of the logits' last dimension.

Your lm_loss flattens the logits with reshape(-1, 8), the course script's vocabulary size. It
works on the counting task and breaks for any other model: with 11 classes the rows are cut in
the wrong places. Take the size from the logits: logits.reshape(-1, logits.shape[-1]).
"""
CAUGHT_BY = ["hidden/test_loss.py::test_lm_loss_matches_reference"]
PATCH = [('inputs, targets = tokens[:, :-1], tokens[:, 1:]\n'
  'logits = model(inputs)\n'
  'return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n',
  'logits = model(tokens[:, :-1])\n'
  'return F.cross_entropy(logits.reshape(-1, 8), tokens[:, 1:].reshape(-1))\n')]
