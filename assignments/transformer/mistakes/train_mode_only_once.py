"""model.train() called once before the loop: after the first validation the model stays in eval mode.

Your loop switches to eval mode for validation and never back, so from the second epoch on the
training steps run in eval mode (dropout off). Call model.train() at the start of every epoch.
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_full_batch_history",
    "hidden/test_train.py::test_train_loss_weighted_by_batch_size",
]
PATCH = [('for epoch in range(epochs):\nmodel.train()\n',
  'for epoch in range(epochs):\n    if epoch == 0:\n        model.train()\n')]
