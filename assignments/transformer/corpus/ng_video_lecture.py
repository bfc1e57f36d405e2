"""Karpathy's "Let's build GPT" lecture model: Block as x = x + sa(ln1(x)), x = x + ffwd(ln2(x)); token plus position embeddings, blocks, ln_f, lm_head; the loss with logits.view(B*T, C) and targets.view(B*T); generate cropping idx[:, -block_size:] and reading logits[:, -1, :]

Source: karpathy/ng-video-lecture, gpt.py, classes ``FeedFoward``, ``Block`` and
``BigramLanguageModel`` (``forward`` with its targets branch, ``generate``), and the data's
``get_batch`` (y is x shifted by one) (MIT licence). Written after its formulation, not copied
(the search tools' terms keep public code out of this repository's commits): the block is
"communication followed by computation", each sub-layer applied to the layer-normed input and
added to the residual stream (the lecture's pre-norm deviation from the paper); the model sums
the token embedding and the positions, runs the blocks, the final LayerNorm and the head; the
loss flattens (B, T, C) logits to (B*T, C) and the targets to (B*T); generate crops the context
to the last block_size tokens and takes the last time step's logits.
Changes for the contract: the lecture's own MultiHeadAttention (a list of single ``Head``s, a
registered tril buffer) becomes the provided ``self_attn`` with the causal mask passed in, so
the blocks live in an nn.ModuleList (the lecture's nn.Sequential cannot pass a mask); FeedFoward's
Sequential becomes ``linear1``/ReLU/``linear2``; ln1/ln2/ln_f and the tables get the contract's
names (``norm1``, ``norm2``, ``norm``, ``embedding``, ``head``); the learned
position_embedding_table is the contract's sinusoidal table (a non-persistent buffer) and the
token embedding is scaled by sqrt(d_model); dropout is dropped; block_size is ``max_len``, with
the ValueError the contract asks for; the targets branch of forward is ``lm_loss`` (the shifted
inputs and targets of get_batch, from one (B, T + 1) tensor); generate is greedy (argmax instead
of softmax and torch.multinomial) and runs in eval mode without gradients. sinusoidal_positions
and train come from the reference.
"""
BUG = (
    "x = x + self.sa(self.norm1(x), mask)\n        x = x + self.ffwd(self.norm2(x))",
    "x = self.norm1(x + self.sa(x, mask))\n        x = self.norm2(x + self.ffwd(x))",
)  # the paper's post-norm ordering
BUG_NAMES = ["post_norm"]


class TransformerBlock(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)  # noqa: F821 - sa
        self.linear1 = nn.Linear(d_model, d_ff)  # noqa: F821 - ffwd
        self.linear2 = nn.Linear(d_ff, d_model)  # noqa: F821
        self.norm1 = nn.LayerNorm(d_model)  # noqa: F821 - ln1
        self.norm2 = nn.LayerNorm(d_model)  # noqa: F821 - ln2

    def sa(self, x, mask):
        return self.self_attn(x, x, x, mask=mask)[0]

    def ffwd(self, x):
        return self.linear2(torch.relu(self.linear1(x)))  # noqa: F821

    def forward(self, x, mask=None):
        x = x + self.sa(self.norm1(x), mask)
        x = x + self.ffwd(self.norm2(x))
        return x


class TinyCausalLM(nn.Module):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.max_len = max_len  # block_size
        self.embedding = nn.Embedding(vocab_size, d_model)  # noqa: F821 - token_embedding_table
        self.blocks = nn.ModuleList([TransformerBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])  # noqa: F821
        self.norm = nn.LayerNorm(d_model)  # noqa: F821 - ln_f
        self.head = nn.Linear(d_model, vocab_size)  # noqa: F821 - lm_head
        self.register_buffer("position_table", sinusoidal_positions(max_len, d_model), persistent=False)  # noqa: F821
        self.register_buffer("tril", torch.tril(torch.ones(max_len, max_len)), persistent=False)  # noqa: F821

    def forward(self, idx):
        B, T = idx.shape
        if T > self.max_len:
            raise ValueError(f"cannot forward {T} tokens, block_size is {self.max_len}")
        tok_emb = self.embedding(idx) * math.sqrt(self.d_model)  # noqa: F821 - (B, T, C)
        pos_emb = self.position_table[:T].to(tok_emb.dtype)  # (T, C)
        x = tok_emb + pos_emb
        mask = self.tril[:T, :T] == 0  # True = blocked
        for block in self.blocks:
            x = block(x, mask)
        x = self.norm(x)
        return self.head(x)  # (B, T, vocab_size)


def lm_loss(model, tokens):
    x, y = tokens[:, :-1], tokens[:, 1:]  # get_batch: y is x shifted by one
    logits = model(x)
    B, T, C = logits.shape
    logits = logits.reshape(B * T, C)
    targets = y.reshape(B * T)
    return F.cross_entropy(logits, targets)  # noqa: F821


@torch.no_grad()  # noqa: F821
def generate(model, prompt, n_new):
    model.eval()
    idx = prompt
    for _ in range(n_new):
        idx_cond = idx[:, -model.max_len:]  # crop to the last block_size tokens
        logits = model(idx_cond)
        logits = logits[:, -1, :]  # (B, C) the last time step
        idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # noqa: F821 - (B, 1)
        idx = torch.cat((idx, idx_next.to(idx.dtype)), dim=1)  # noqa: F821
    return idx
