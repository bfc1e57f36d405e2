"""train clips by hand, g * max_norm / ||g|| without torch's 1e-6 (d2l's grad_clipping; the contract allows it)

The same rescaling as ``nn.utils.clip_grad_norm_`` except for the 1e-6 it adds to the norm: the
trajectories differ by round-off-sized amounts, within the tests' tolerance.
"""


def _clip_by_hand(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = torch.sqrt(sum(torch.sum(g**2) for g in grads))  # noqa: F821
    if norm > max_norm:
        for g in grads:
            g.mul_(max_norm / norm)


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)  # noqa: F821
    n_rows = train_tokens.shape[0]
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best_loss, best_state = math.inf, None  # noqa: F821
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for rows in torch.randperm(n_rows, generator=generator).split(batch_size):  # noqa: F821
            optimizer.zero_grad()
            loss = lm_loss(model, train_tokens[rows])  # noqa: F821
            loss.backward()
            _clip_by_hand(list(model.parameters()), 1.0)
            optimizer.step()
            total += loss.item() * len(rows)
        history["train_loss"].append(total / n_rows)
        model.eval()
        with torch.no_grad():  # noqa: F821
            val = lm_loss(model, val_tokens).item()  # noqa: F821
        history["val_loss"].append(val)
        if val < best_loss:
            best_loss, history["best_epoch"] = val, epoch
            best_state = copy.deepcopy(model.state_dict())  # noqa: F821
    if best_state is not None:
        model.load_state_dict(best_state)
    return history
