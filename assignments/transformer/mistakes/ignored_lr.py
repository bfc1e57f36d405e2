"""The lr argument is ignored: the optimiser always uses 3e-3.

Your loop builds the optimiser with a hard-coded learning rate, so train(..., lr=0.05) trains as
if lr were 3e-3. Pass the argument through: torch.optim.AdamW(model.parameters(), lr=lr).
"""
CAUGHT_BY = ["hidden/test_train.py::test_full_batch_history"]
PATCH = [('optimizer = torch.optim.AdamW(model.parameters(), lr=lr)\n',
  'optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)\n')]
