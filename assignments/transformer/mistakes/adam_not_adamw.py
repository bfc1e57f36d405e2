"""torch.optim.Adam instead of torch.optim.AdamW.

The contract's optimiser is AdamW, whose decoupled weight decay (0.01 by default) shrinks the
weights a little at every step; Adam has no weight decay by default, so the trajectories differ.
Use torch.optim.AdamW(model.parameters(), lr=lr).
"""
CAUGHT_BY = ["hidden/test_train.py::test_full_batch_history"]
PATCH = [('optimizer = torch.optim.AdamW(model.parameters(), lr=lr)\n',
  'optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n')]
