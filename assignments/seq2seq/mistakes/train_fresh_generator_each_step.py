"""train_copy seeds a new generator every step, so every batch is the same.

Your loop creates torch.Generator().manual_seed(seed) inside the loop: each step starts the
random stream afresh and trains on the identical batch, so the model memorises 64 sequences
instead of learning to copy. Create the generator once, before the loop.
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        generator = torch.Generator().manual_seed(seed)  # reseeded every step
        src, tgt_in = copy_batch(batch_size, length, generator)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), src.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
