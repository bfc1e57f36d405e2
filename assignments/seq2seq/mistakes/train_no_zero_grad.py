"""train_copy never calls zero_grad: the gradients pile up across steps.

Your second and later updates differ from the reference's: PyTorch ADDS each backward pass into
.grad, so without optimizer.zero_grad() every step uses the sum of all gradients so far. Call
optimizer.zero_grad() once per step, before loss.backward().
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        src, tgt_in = copy_batch(batch_size, length, generator)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), src.reshape(-1))
        loss.backward()  # no zero_grad: gradients accumulate
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
