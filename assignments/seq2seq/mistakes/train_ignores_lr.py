"""train_copy ignores its lr argument (the learning rate is hard-coded).

Your optimiser always uses lr=3e-3, whatever lr the caller passes. Use the argument:
torch.optim.Adam(model.parameters(), lr=lr).
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]
PATCH = [('optimizer = torch.optim.Adam(model.parameters(), lr=lr)\nmodel.train()\n',
  'optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)  # lr ignored\n')]
