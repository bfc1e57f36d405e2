"""train_copy ignores its lr argument (the learning rate is hard-coded).

Your optimiser always uses lr=3e-3, whatever lr the caller passes. Use the argument:
torch.optim.Adam(model.parameters(), lr=lr).
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)  # lr ignored
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
