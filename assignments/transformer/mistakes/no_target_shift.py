"""No target shift in lm_loss: each position is scored against its own input token.

Your lm_loss compares the logits at position t with tokens[:, t], the token the model has just
read. With the causal mask that is a copy task, not language modelling: the loss drops to 0 and
the model learns nothing about what comes next (generation repeats the prompt). Inputs are
tokens[:, :-1], targets are tokens[:, 1:]: position t predicts token t + 1.
"""
CAUGHT_BY = [
    "public/test_transformer_public.py::test_lm_loss_shifts_targets",
    "hidden/test_loss.py::test_lm_loss_matches_reference",
]
PATCH = [('inputs, targets = tokens[:, :-1], tokens[:, 1:]\n', 'inputs = tokens[:, :-1]\n'),
 ('return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))\n',
  'return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), inputs.reshape(-1))\n')]
