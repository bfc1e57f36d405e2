"""OpenNMT-py's MultiHeadedAttention and PositionalEncoding: shape() as view(batch, -1, heads, dim_per_head).transpose(1, 2), the query divided by sqrt(dim_per_head) BEFORE the matmul with key.transpose(2, 3), masked_fill with a large negative number, unshape() back; div_term as exp(arange(0, dim, 2) * -(log(10000) / dim))

Source: OpenNMT/OpenNMT-py, onmt/modules/multi_headed_attn.py, class ``MultiHeadedAttention``
(``forward`` with its inner ``shape`` and ``unshape``), and onmt/modules/embeddings.py, class
``PositionalEncoding`` (``__init__``) (MIT licence). Written after its formulation, not copied
(the search tools' terms keep public code out of this repository's commits): the three
projections are shaped to (batch, heads, len, dim_per_head); the query is scaled first,
``query / sqrt(dim_per_head)``, then ``matmul(query, key.transpose(2, 3))``; blocked scores
are filled; softmax over the keys; ``matmul(attn, value)``; unshape to (batch, len, model_dim)
and ``final_linear``. The table is built in float32 as the source does (position.float() *
div_term), sine in the even columns and cosine in the odd ones, with the source's ValueError
for an odd dim.
Changes for the contract: ``linear_query``, ``linear_keys``, ``linear_values`` become
nn.MultiheadAttention's ``in_proj_weight``/``in_proj_bias`` cut in three and applied with
F.linear, ``final_linear`` is ``out_proj``, and the ``bias`` argument controls them all; the
argument order is the contract's (query, key, value) (the source's is key, value, query); the
source's mask has the same convention (True = blocked, e.g. ``src.eq(pad)``) but arrives 3-D
and is unsqueezed at dim 1: here masks are already 2-D or 4-D; the source's ``-1e18`` fill
becomes -inf with the reference's guarded softmax, so a fully blocked query gets zero weights as
the contract asks (with -1e18 it gets uniform ones); the ``scores.float()`` cast and the cast
back are dropped (they only matter for half precision; the grader's float64 would lose
precision); dropout, the layer cache and relative positions are dropped; the source returns
head 0's weights only (``top_attn``), here every head's; the assert is a ValueError; the table
is returned (n_positions, d_model) rather than a (1, max_len, dim) buffer added in forward.
"""
BUG = ('scores.masked_fill(mask, float("-inf"))', "scores.masked_fill(mask, -1e18)")  # the source's fill
BUG_NAMES = ["large_negative_fill"]


def _shape(x, head_count, dim_per_head):
    batch_size = x.size(0)
    return x.view(batch_size, -1, head_count, dim_per_head).transpose(1, 2)


def _unshape(x, head_count, dim_per_head):
    batch_size = x.size(0)
    return x.transpose(1, 2).contiguous().view(batch_size, -1, head_count * dim_per_head)


def split_heads(x, n_heads):
    model_dim = x.size(-1)
    if model_dim % n_heads != 0:
        raise ValueError(f"model_dim {model_dim} is not divisible by head_count {n_heads}")
    return _shape(x, n_heads, model_dim // n_heads)


def merge_heads(x):
    return _unshape(x, x.size(1), x.size(3))


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"Cannot use sin/cos positional encoding with odd dim (got dim={d_model})")
    pe = torch.zeros(n_positions, d_model)  # noqa: F821
    position = torch.arange(0, n_positions).unsqueeze(1)  # noqa: F821
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float) * -(math.log(10000.0) / d_model))  # noqa: F821
    pe[:, 0::2] = torch.sin(position.float() * div_term)  # noqa: F821
    pe[:, 1::2] = torch.cos(position.float() * div_term)  # noqa: F821
    return pe


class MultiHeadAttention(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"model_dim {d_model} is not divisible by head_count {n_heads}")
        self.dim_per_head = d_model // n_heads
        self.model_dim = d_model
        self.head_count = n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))  # noqa: F821
        nn.init.xavier_uniform_(self.in_proj_weight)  # noqa: F821
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))  # noqa: F821
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # noqa: F821 - final_linear

    def _linear(self, x, i):
        d = self.model_dim
        w = self.in_proj_weight[i * d:(i + 1) * d]
        b = None if self.in_proj_bias is None else self.in_proj_bias[i * d:(i + 1) * d]
        return F.linear(x, w, b)  # noqa: F821

    def forward(self, query, key, value, mask=None):
        dim_per_head = self.dim_per_head
        head_count = self.head_count
        # 1) Project key, value, and query.
        key = _shape(self._linear(key, 1), head_count, dim_per_head)
        value = _shape(self._linear(value, 2), head_count, dim_per_head)
        query = _shape(self._linear(query, 0), head_count, dim_per_head)
        # 2) Calculate and scale scores.
        query = query / math.sqrt(dim_per_head)  # noqa: F821
        scores = torch.matmul(query, key.transpose(2, 3))  # noqa: F821
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        # 3) Compute context vectors.
        attn = _softmax_last(scores)  # noqa: F821
        context = _unshape(torch.matmul(attn, value), head_count, dim_per_head)  # noqa: F821
        return self.out_proj(context), attn
