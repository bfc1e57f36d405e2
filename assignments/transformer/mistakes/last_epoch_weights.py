"""The model is left with the last epoch's weights instead of the best epoch's.

Your loop records best_epoch but never restores its weights, so the returned model is the
last one, possibly overfitted. Save a copy of model.state_dict() when the validation loss
improves and load it back with model.load_state_dict(...) after the loop.
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_and_weights"]
PATCH = [('best_loss, best_state = math.inf, None\n', 'best_loss = math.inf\n'),
 ('best_state = copy.deepcopy(model.state_dict())\n'
  'if best_state is not None:\n'
  'model.load_state_dict(best_state)\n',
  '')]
