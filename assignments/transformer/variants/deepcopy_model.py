"""Different structure: positions computed on the fly, argsort shuffle, deepcopy of the whole model.

A correct solution with another organisation: the block's feed-forward as an nn.Sequential
wrapped so the parameter names stay linear1/linear2, the positional table built in forward,
shuffling by sorting uniform draws from the seeded generator, the training loss accumulated
in float64 tensors, the checkpoint kept as a deep copy of the whole model, and generation
with an explicit list of new columns.
"""


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, n_heads)  # noqa: F821
        self.norm2 = nn.LayerNorm(d_model)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def _ffn(self, x):
        return self.linear2(F.relu(self.linear1(x)))

    def forward(self, x, mask=None):
        y = self.norm1(x)
        x = self.self_attn(y, y, y, mask)[0] + x
        return self._ffn(self.norm2(x)) + x


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList([TransformerBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        self.max_len = max_len

    def forward(self, tokens):
        B, T = tokens.shape
        if T > self.max_len:
            raise ValueError("input longer than max_len")
        d = self.embedding.embedding_dim
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        x = self.embedding(tokens) * math.sqrt(d)
        x = x + sinusoidal_positions(T, d).to(x.dtype)  # noqa: F821
        for blk in self.blocks:
            x = blk(x, mask=causal)
        return self.head(self.norm(x))


def lm_loss(model, tokens):
    x, y = tokens[:, :-1], tokens[:, 1:]
    logits = model(x)
    return F.cross_entropy(logits.flatten(0, 1), y.flatten())


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr)
    history = {"train_loss": [], "val_loss": []}
    best_model, best_val, best_epoch = None, float("inf"), 0
    for epoch in range(epochs):
        model.train()
        perm = torch.rand(train_tokens.shape[0], generator=gen).argsort()
        weighted = torch.zeros((), dtype=torch.float64)
        for i in range(0, len(perm), batch_size):
            rows = perm[i:i + batch_size]
            optimizer.zero_grad()
            loss = lm_loss(model, train_tokens[rows])
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            weighted += loss.detach().double() * rows.numel()
        history["train_loss"].append((weighted / train_tokens.shape[0]).item())
        model.eval()
        with torch.no_grad():
            val_loss = lm_loss(model, val_tokens).item()
        history["val_loss"].append(val_loss)
        if val_loss < best_val:
            best_val, best_epoch = val_loss, epoch
            best_model = copy.deepcopy(model)
    model.load_state_dict(best_model.state_dict())
    history["best_epoch"] = best_epoch
    return history


def generate(model, prompt, n_new):
    model.train(False)
    columns = []
    context = prompt
    with torch.no_grad():
        for _ in range(n_new):
            nxt = model(context[:, -model.max_len:])[:, -1, :].argmax(dim=1)
            columns.append(nxt)
            context = torch.cat([context, nxt.unsqueeze(1)], 1)
    return torch.cat([prompt] + [c.unsqueeze(1) for c in columns], dim=1)
