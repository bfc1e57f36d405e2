"""Validation loss computed in train mode.

Your loop never calls model.eval() before the validation loss, so layers such as dropout still
behave as in training and the validation loss is not the loss of the model you would deploy.
Call model.eval() (and torch.no_grad()) for validation, and model.train() again before the next epoch.
"""
CAUGHT_BY = ["hidden/test_train.py::test_full_batch_history", "hidden/test_train.py::test_validation_eval_mode"]
PATCH = [('history["train_loss"].append(total / n_rows)\nmodel.eval()\n',
  'history["train_loss"].append(total / n_rows)\n')]
