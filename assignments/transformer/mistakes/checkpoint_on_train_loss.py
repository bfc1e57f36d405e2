"""Checkpoint chosen on the training loss instead of the validation loss.

Your loop keeps the epoch with the lowest training loss. The training loss keeps falling while
the model starts to overfit, so it always picks the last epoch; the point of a validation set is
to pick the checkpoint on data the model is not trained on (and never on the test set, which is
reserved for the final report).
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_and_weights"]
PATCH = [('if val < best_loss:\nbest_loss, history["best_epoch"] = val, epoch\n',
  "if history['train_loss'][-1] < best_loss:\n"
  '    best_loss, history["best_epoch"] = history[\'train_loss\'][-1], epoch\n')]
