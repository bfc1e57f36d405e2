"""train_copy uses plain SGD instead of Adam.

Your updates are SGD steps. The copy task's recipe (the same as Week 8's, so the comparison is
clean) is torch.optim.Adam(model.parameters(), lr=lr): at lr = 3e-3, SGD barely moves the
weights in 1,000 steps and the model never learns to copy.
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_train_copy_follows_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]
PATCH = [('optimizer = torch.optim.Adam(model.parameters(), lr=lr)\nmodel.train()\n',
  'optimizer = torch.optim.SGD(model.parameters(), lr=lr)\n')]
