"""nanoGPT's train.py loop: estimate_loss() under no_grad in eval mode then back to train, backward, clip_grad_norm_, step, zero_grad(set_to_none=True), a checkpoint whenever the validation loss beats best_val_loss; the loss with ignore_index=-1

Source: karpathy/nanoGPT, train.py (the training loop and ``estimate_loss``) and model.py
(``GPT.forward``'s ``F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
ignore_index=-1)``) (MIT licence). Written after its formulation, not copied (the search tools'
terms keep public code out of this repository's commits): optimiser created once; for each
iteration, the loss, backward, clip the gradient norm (``grad_clip`` = 1.0), step, then
``optimizer.zero_grad(set_to_none=True)``; evaluation decorated with torch.no_grad, model.eval()
before and model.train() after; ``if losses['val'] < best_val_loss`` saves the model's
state_dict as the checkpoint.
Changes for the contract: nanoGPT draws random windows with torch.randint each iteration
(``get_batch``); here each epoch walks a fresh torch.randperm of the rows, from one generator
seeded with ``seed``, in batches of batch_size; the evaluation runs after every epoch on the whole
validation set (nanoGPT averages eval_iters random batches of both splits) and the epoch's
train loss is the batch losses weighted by batch size; plain torch.optim.AdamW(lr=lr) (nanoGPT's
``configure_optimizers`` sets weight-decay groups, betas and a fused kernel), no learning-rate
schedule, GradScaler, gradient accumulation or DDP; the checkpoint is a deep copy of the
state_dict in memory (nanoGPT torch.save's it) and is loaded back at the end; the history dict
is returned. lm_loss keeps nanoGPT's ignore_index=-1 (no token is -1 here, so it changes
nothing). The model comes from the reference.
"""
BUG = ("optimizer.zero_grad(set_to_none=True)", "pass")  # gradients accumulate across steps
BUG_NAMES = ["missing_zero_grad"]


def lm_loss(model, tokens):
    X, Y = tokens[:, :-1], tokens[:, 1:]
    logits = model(X)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), Y.reshape(-1), ignore_index=-1)  # noqa: F821


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    @torch.no_grad()  # noqa: F821
    def estimate_loss():
        model.eval()
        out = lm_loss(model, val_tokens).item()
        model.train()
        return out

    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)  # noqa: F821
    grad_clip = 1.0
    best_val_loss = 1e9
    checkpoint = None
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    model.train()
    for epoch in range(epochs):
        running, seen = 0.0, 0
        for rows in torch.randperm(len(train_tokens), generator=generator).split(batch_size):  # noqa: F821
            loss = lm_loss(model, train_tokens[rows])
            loss.backward()
            if grad_clip != 0.0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)  # noqa: F821
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            running += loss.item() * len(rows)
            seen += len(rows)
        history["train_loss"].append(running / seen)
        val_loss = estimate_loss()
        history["val_loss"].append(val_loss)
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            history["best_epoch"] = epoch
            checkpoint = copy.deepcopy(model.state_dict())  # noqa: F821
    if checkpoint is not None:
        model.load_state_dict(checkpoint)
    return history
