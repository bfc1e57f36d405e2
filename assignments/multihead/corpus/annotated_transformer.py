"""The Annotated Transformer's MultiHeadedAttention and PositionalEncoding: view(nbatches, -1, h, d_k).transpose(1, 2), the merge with transpose(1, 2).contiguous().view, div_term as exp(arange(0, d, 2) * -(log(10000) / d))

Source: harvardnlp/annotated-transformer, the_annotated_transformer.py, classes
``MultiHeadedAttention`` and ``PositionalEncoding`` and function ``attention`` (MIT licence).
Written after its formulation, not copied: the search tools' terms keep public code out of this
repository's commits, so each step below follows the source's order and operations, in the
kit's names. split_heads is the source's per-projection ``view(nbatches, -1, h, d_k)`` then
``transpose(1, 2)``; merge_heads its ``transpose(1, 2).contiguous().view(nbatches, -1, h * d_k)``;
the positional table is built in float32 in log space exactly as the source does.
Changes for the contract: the source's four ``clones(nn.Linear(d_model, d_model), 4)`` become
``nn.MultiheadAttention``'s parameter names (``in_proj_weight``/``in_proj_bias`` cut in three,
applied with F.linear in the source's ``zip`` over (query, key, value), and ``out_proj`` for the
fourth linear); ``assert d_model % h == 0`` becomes a ValueError (in __init__ and in split_heads);
the source's mask keeps where it is 1 (``mask == 0`` is blocked) and is unsqueezed for a 3-D
mask, here True is blocked and masks are already 2-D or 4-D (no unsqueeze); the -1e9 fill is
-inf and ``scores.softmax`` is the reference's guarded softmax, so a fully blocked query gets
zero weights as the contract asks; dropout and ``self.attn`` are dropped, the weights are
returned; the table is a function of (n_positions, d_model) rather than a buffer added in
forward, with a ValueError for an odd d_model; the bias=False case is added.
"""
BUG = (".transpose(1, 2).contiguous()", ".contiguous()")  # merge without transposing back
BUG_NAMES = ["merge_no_transpose"]


def split_heads(x, n_heads):
    nbatches, _, d_model = x.shape
    if d_model % n_heads != 0:
        raise ValueError(f"d_model = {d_model} is not divisible by h = {n_heads}")
    d_k = d_model // n_heads
    return x.view(nbatches, -1, n_heads, d_k).transpose(1, 2)


def merge_heads(x):
    nbatches, h, _, d_k = x.shape
    return x.transpose(1, 2).contiguous().view(nbatches, -1, h * d_k)


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    pe = torch.zeros(n_positions, d_model)  # noqa: F821
    position = torch.arange(0, n_positions).unsqueeze(1)  # noqa: F821
    div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))  # noqa: F821
    pe[:, 0::2] = torch.sin(position * div_term)  # noqa: F821
    pe[:, 1::2] = torch.cos(position * div_term)  # noqa: F821
    return pe


class MultiHeadAttention(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by h = {n_heads}")
        self.d_k = d_model // n_heads
        self.h = n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))  # noqa: F821
        nn.init.xavier_uniform_(self.in_proj_weight)  # noqa: F821
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))  # noqa: F821
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # noqa: F821

    def forward(self, query, key, value, mask=None):
        weights = self.in_proj_weight.chunk(3)
        biases = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        # 1) the linear projections in batch, then d_model => h x d_k
        query, key, value = [
            split_heads(F.linear(x, w, b), self.h)  # noqa: F821
            for w, b, x in zip(weights, biases, (query, key, value))
        ]
        # 2) attention on all the projected vectors in batch (the source's attention())
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)  # noqa: F821
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        p_attn = _softmax_last(scores)  # noqa: F821
        x = torch.matmul(p_attn, value)  # noqa: F821
        # 3) "concat" with a view and apply the final linear
        x = merge_heads(x)
        return self.out_proj(x), p_attn
