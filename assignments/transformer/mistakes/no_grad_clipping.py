"""No gradient clipping.

The contract's step clips the global gradient norm at 1.0 with
nn.utils.clip_grad_norm_(model.parameters(), 1.0) between backward() and step(), as the course's
script does; without it, one large gradient (early in training, or with a large learning rate)
can throw the weights far off.
"""
CAUGHT_BY = ["hidden/test_train.py::test_full_batch_history"]
PATCH = [('nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n', '')]
