"""minGPT's Block, GPT.forward, loss and generate: x + attn(ln_1(x)), x + mlpf(ln_2(x)); tok_emb + positions, blocks, ln_f, head; cross_entropy on view(-1, V); generate crops to block_size and picks torch.topk(probs, k=1)

Source: karpathy/minGPT, mingpt/model.py, classes ``Block`` and ``GPT`` (``forward`` and
``generate``) (MIT licence). Written after its formulation, not copied: the search tools'
terms keep public code out of this repository's commits, so each step below follows the
source's order and operations, in the kit's names.
Changes for the contract: the block's sub-modules take nn.TransformerEncoderLayer's names
(ln_1/ln_2 -> norm1/norm2, attn -> self_attn, the MLP's c_fc/c_proj -> linear1/linear2 at the
top level, its ``mlpf`` a method rather than a lambda) and the activation is ReLU, not GELU; the
block takes the causal mask from the model (minGPT's attention keeps its own ``tril`` buffer,
kept here in the model as a non-persistent buffer, True = blocked, so the state_dict holds only
parameters); GPT's learned ``pos_emb`` becomes the sinusoidal table (a non-persistent buffer) and
token embeddings are scaled by sqrt(d_model); ``assert t <= block_size`` is a ValueError and
block_size is ``max_len``; no dropout, no weight init; ``blocks`` is an nn.ModuleList (minGPT's
newer ModuleDict ``h``); forward returns only logits and the loss (minGPT's ``targets`` branch)
is lm_loss on the shifted tokens; generate is a function of any model with ``max_len`` (minGPT's
is a method), runs in eval mode under no_grad, greedy only (do_sample=False, temperature 1, no
top_k). train comes from the reference.
"""
BUG = ("else idx[:, -model.max_len:]", "else idx")  # context not cropped to max_len
BUG_NAMES = ["generate_no_crop"]


class TransformerBlock(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)  # noqa: F821
        self.self_attn = MultiHeadAttention(d_model, n_heads)  # noqa: F821
        self.norm2 = nn.LayerNorm(d_model)  # noqa: F821
        self.linear1 = nn.Linear(d_model, d_ff)  # noqa: F821 - c_fc
        self.linear2 = nn.Linear(d_ff, d_model)  # noqa: F821 - c_proj

    def mlpf(self, x):
        return self.linear2(F.relu(self.linear1(x)))  # noqa: F821

    def attn(self, x, mask):
        return self.self_attn(x, x, x, mask=mask)[0]

    def forward(self, x, mask=None):
        x = x + self.attn(self.norm1(x), mask)
        x = x + self.mlpf(self.norm2(x))
        return x


class TinyCausalLM(nn.Module):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__()
        self.max_len = max_len
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)  # noqa: F821 - wte
        self.blocks = nn.ModuleList([TransformerBlock(d_model, n_heads, d_ff) for _ in range(n_layers)])  # noqa: F821
        self.norm = nn.LayerNorm(d_model)  # noqa: F821 - ln_f
        self.head = nn.Linear(d_model, vocab_size)  # noqa: F821 - lm_head
        self.register_buffer("pos_emb", sinusoidal_positions(max_len, d_model), persistent=False)  # noqa: F821
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len)) == 0, persistent=False)  # noqa: F821

    def forward(self, idx):
        b, t = idx.size()
        if t > self.max_len:
            raise ValueError(f"Cannot forward sequence of length {t}, block size is only {self.max_len}")
        tok_emb = self.embedding(idx) * math.sqrt(self.d_model)  # noqa: F821
        pos_emb = self.pos_emb[:t].to(tok_emb.dtype)
        x = tok_emb + pos_emb
        for block in self.blocks:
            x = block(x, mask=self.bias[:t, :t])
        x = self.norm(x)
        return self.head(x)


def lm_loss(model, tokens):
    idx, targets = tokens[:, :-1], tokens[:, 1:]
    logits = model(idx)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))  # noqa: F821


@torch.no_grad()  # noqa: F821
def generate(model, prompt, n_new):
    model.eval()
    idx = prompt
    for _ in range(n_new):
        # if the sequence context is growing too long we must crop it at block_size
        idx_cond = idx if idx.size(1) <= model.max_len else idx[:, -model.max_len:]
        logits = model(idx_cond)
        logits = logits[:, -1, :]
        probs = F.softmax(logits, dim=-1)  # noqa: F821
        _, idx_next = torch.topk(probs, k=1, dim=-1)  # noqa: F821
        idx = torch.cat((idx, idx_next.to(idx.dtype)), dim=1)  # noqa: F821
    return idx
