"""Checkpoint chosen on the training loss instead of the validation loss.

Your loop keeps the epoch with the lowest training loss. The training loss keeps falling while
the model starts to overfit, so it always picks the last epoch; the point of a validation set is
to pick the checkpoint on data the model is not trained on (and never on the test set, which is
reserved for the final report).
"""
CAUGHT_BY = ["hidden/test_train.py::test_best_epoch_and_weights"]


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    n_rows = train_tokens.shape[0]
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best_loss, best_state = math.inf, None
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
        if history['train_loss'][-1] < best_loss:
            best_loss, history["best_epoch"] = history['train_loss'][-1], epoch
            best_state = copy.deepcopy(model.state_dict())
    if best_state is not None:
        model.load_state_dict(best_state)
    return history
