"""The model is left with the last epoch's weights instead of the best epoch's.

Your loop records best_epoch but never restores its weights, so the returned model is the
last one, possibly overfitted. Save a copy of model.state_dict() when the validation loss
improves and load it back with model.load_state_dict(...) after the loop.
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_and_weights"]


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    n_rows = train_tokens.shape[0]
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best_loss = math.inf
    for epoch in range(epochs):
        model.train()
        total = 0.0
        for rows in torch.randperm(n_rows, generator=generator).split(batch_size):
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
    return history
