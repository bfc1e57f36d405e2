"""train_loss is the plain mean of the batch losses: a smaller last batch counts as much as a full one.

Each batch loss is already a mean over its rows, so averaging the batch means gives the rows of a
short last batch more weight. The epoch's training loss is the mean over its rows: sum
loss.item() * len(batch) and divide by the number of rows.
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_loss_weighted_by_batch_size"]


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    n_rows = train_tokens.shape[0]
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best_loss, best_state = math.inf, None
    for epoch in range(epochs):
        model.train()
        losses = []
        for rows in torch.randperm(n_rows, generator=generator).split(batch_size):
            optimizer.zero_grad()
            loss = lm_loss(model, train_tokens[rows])
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
        history["train_loss"].append(sum(losses) / len(losses))
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
