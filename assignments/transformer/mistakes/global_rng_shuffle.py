"""The shuffle uses the global random generator instead of a generator seeded with `seed`.

torch.randperm(n) without a generator draws from the global RNG, so the order (and the whole
history) depends on everything that ran before; the seed argument does nothing. Create
generator = torch.Generator().manual_seed(seed) once and call torch.randperm(n, generator=generator).
"""
CAUGHT_BY = ["hidden/test_train.py::test_same_seed_same_history"]


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    n_rows = train_tokens.shape[0]
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best_loss, best_state = math.inf, None
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for rows in torch.randperm(n_rows).split(batch_size):
            optimizer.zero_grad()
            loss = lm_loss(model, train_tokens[rows])
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item() * len(rows)
        history["train_loss"].append(total / n_rows)
        model.eval()
        with torch.no_grad():
            val = lm_loss(model, val_tokens).item()
        history["val_loss"].append(val)
        if val < best_loss:
            best_loss, history["best_epoch"] = val, epoch
            best_state = copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    return history
