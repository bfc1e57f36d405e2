"""train_copy clips by hand, g * max_norm / ||g|| without torch's 1e-6 (d2l's grad_clipping; the contract allows it)

The same rescaling as ``nn.utils.clip_grad_norm_`` except for the 1e-6 it adds to the norm: the
trajectories differ by round-off-sized amounts, within the tests' tolerance.
"""


def _clip_by_hand(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = torch.sqrt(sum(torch.sum(g**2) for g in grads))  # noqa: F821
    if norm > max_norm:
        for g in grads:
            g.mul_(max_norm / norm)


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # noqa: F821
    model.train()
    losses = []
    for _ in range(steps):
        src, tgt_in = copy_batch(batch_size, length, generator)  # noqa: F821
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), src.reshape(-1))  # noqa: F821
        optimizer.zero_grad()
        loss.backward()
        _clip_by_hand(list(model.parameters()), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
