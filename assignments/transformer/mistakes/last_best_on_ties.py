"""best_epoch uses <= so a tie moves the checkpoint to the later epoch.

On equal validation losses the contract keeps the first epoch (replace only on a strict
improvement, val < best): a later epoch that is no better is not worth the extra training.
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_first_on_ties"]
PATCH = [('if val < best_loss:\n', 'if val <= best_loss:\n')]
