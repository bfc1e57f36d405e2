"""train_copy never calls zero_grad: the gradients pile up across steps.

Your second and later updates differ from the reference's: PyTorch ADDS each backward pass into
.grad, so without optimizer.zero_grad() every step uses the sum of all gradients so far. Call
optimizer.zero_grad() once per step, before loss.backward().
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]
PATCH = [('model.train()\n', ''), ('optimizer.zero_grad()\n', '')]
