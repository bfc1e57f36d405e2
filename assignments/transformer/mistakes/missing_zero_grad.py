"""Missing optimizer.zero_grad(): gradients accumulate across steps.

PyTorch adds each backward() into .grad; without optimizer.zero_grad() before every backward,
step k uses the sum of all gradients so far, not the gradient of the current batch. Call
optimizer.zero_grad() at the start of every step.
"""
CAUGHT_BY = ["hidden/test_train.py::test_full_batch_history"]
PATCH = [('optimizer.zero_grad()\n', '')]
