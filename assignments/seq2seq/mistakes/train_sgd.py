"""train_copy uses plain SGD instead of Adam.

Your updates are SGD steps. The copy task's recipe (the same as Week 8's, so the comparison is
clean) is torch.optim.Adam(model.parameters(), lr=lr): at lr = 3e-3, SGD barely moves the
weights in 1,000 steps and the model never learns to copy.
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_train_copy_follows_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        src, tgt_in = copy_batch(batch_size, length, generator)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), src.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
