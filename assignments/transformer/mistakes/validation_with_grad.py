"""Validation loss computed with gradients enabled.

Your validation runs outside torch.no_grad(), so PyTorch builds a graph for data that is never
trained on: wasted memory and time (and a risk of calling backward on it by accident). Wrap the
validation loss in `with torch.no_grad():`.
"""
CAUGHT_BY = ["hidden/test_train.py::test_validation_no_grad"]
PATCH = [('with torch.no_grad():\nval = lm_loss(model, val_tokens).item()\n',
  'val = lm_loss(model, val_tokens).item()\n')]
