"""train_copy does not clip the gradient norm.

Your updates differ from the reference's whenever the gradient norm exceeds 1. Recurrent
networks are prone to exploding gradients; the recipe rescales them with
nn.utils.clip_grad_norm_(model.parameters(), 1.0) between loss.backward() and optimizer.step().
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]
PATCH = [('model.train()\n', ''), ('nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n', '')]
