"""Explicit style: block written step by step, manual index batching, log_softmax loss, while-loop generation.

A correct solution organised differently from the reference: the FFN with F.linear on the
modules' weights, the causal mask from index comparisons, the loss from log_softmax and gather,
batches sliced from a permuted index list in a while loop, the best weights cloned tensor by
tensor, and generation as a while loop that stops at the requested length.
"""


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)  # noqa: F821
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x, mask=None):
        normed = F.layer_norm(x, (x.shape[-1],), self.norm1.weight, self.norm1.bias, self.norm1.eps)
        attended, _ = self.self_attn(normed, normed, normed, mask=mask)
        x = x + attended
        normed = F.layer_norm(x, (x.shape[-1],), self.norm2.weight, self.norm2.bias, self.norm2.eps)
        hidden = F.linear(normed, self.linear1.weight, self.linear1.bias).clamp(min=0)
        return x + F.linear(hidden, self.linear2.weight, self.linear2.bias)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__()
        self.max_len = max_len
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)
        blocks = []
        for _ in range(n_layers):
            blocks.append(TransformerBlock(d_model, n_heads, d_ff))
        self.blocks = nn.ModuleList(blocks)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens):
        T = tokens.size(1)
        if T > self.max_len:
            raise ValueError(f"got {T} tokens but max_len is {self.max_len}")
        idx = torch.arange(T)
        mask = idx[None, :] > idx[:, None]
        pe = sinusoidal_positions(self.max_len, self.d_model)[:T]  # noqa: F821
        x = self.embedding(tokens) * self.d_model ** 0.5 + pe.to(self.embedding.weight.dtype)
        for i in range(len(self.blocks)):
            x = self.blocks[i](x, mask)
        return self.head(self.norm(x))


def lm_loss(model, tokens):
    logits = model(tokens[:, :-1])
    logp = torch.log_softmax(logits, dim=-1)
    picked = logp.gather(-1, tokens[:, 1:].unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    train_losses, val_losses = [], []
    best, best_epoch, best_weights = None, 0, None
    n = len(train_tokens)
    for epoch in range(epochs):
        model.train()
        order = torch.randperm(n, generator=g).tolist()
        start, loss_sum = 0, 0.0
        while start < n:
            idx = order[start:start + batch_size]
            start += batch_size
            batch = train_tokens[idx]
            loss = lm_loss(model, batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(list(model.parameters()), max_norm=1.0)
            opt.step()
            loss_sum += float(loss.detach()) * len(idx)
        train_losses.append(loss_sum / n)
        model.eval()
        with torch.no_grad():
            v = float(lm_loss(model, val_tokens))
        val_losses.append(v)
        if best is None or v < best:
            best, best_epoch = v, epoch
            best_weights = {k: t.detach().clone() for k, t in model.state_dict().items()}
    model.load_state_dict(best_weights)
    return {"train_loss": train_losses, "val_loss": val_losses, "best_epoch": best_epoch}


def generate(model, prompt, n_new):
    model.eval()
    out = prompt.clone()
    with torch.no_grad():
        while out.shape[1] < prompt.shape[1] + n_new:
            logits = model(out[:, max(0, out.shape[1] - model.max_len):])
            out = torch.cat([out, logits[:, logits.shape[1] - 1, :].argmax(-1)[:, None]], dim=1)
    return out
