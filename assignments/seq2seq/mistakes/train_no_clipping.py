"""train_copy does not clip the gradient norm.

Your updates differ from the reference's whenever the gradient norm exceeds 1. Recurrent
networks are prone to exploding gradients; the recipe rescales them with
nn.utils.clip_grad_norm_(model.parameters(), 1.0) between loss.backward() and optimizer.step().
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
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # no clipping
        losses.append(loss.item())
    return losses
