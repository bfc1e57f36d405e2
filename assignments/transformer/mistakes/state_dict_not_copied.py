"""Best weights saved as model.state_dict() without a copy: later steps overwrite them.

model.state_dict() returns references to the live parameter tensors, not a snapshot. The
optimiser updates those tensors in place, so the "best" checkpoint silently becomes the last
weights. Save copy.deepcopy(model.state_dict()) (or {k: v.clone() for k, v in ...}).
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_and_weights"]
PATCH = [('best_state = copy.deepcopy(model.state_dict())\n', 'best_state = model.state_dict()\n')]
