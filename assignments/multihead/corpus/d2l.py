"""Dive into Deep Learning's MultiHeadAttention: transpose_qkv/transpose_output through a (batch * heads) axis, DotProductAttention with torch.bmm, and d2l's PositionalEncoding (pos / torch.pow(10000, arange(0, d, 2) / d))

Source: d2l-ai/d2l-en, chapter_attention-mechanisms-and-transformers (multihead-attention.md,
self-attention-and-positional-encoding.md, attention-scoring-functions.md), functions
``transpose_qkv`` and ``transpose_output``, classes ``MultiHeadAttention``,
``DotProductAttention`` and ``PositionalEncoding`` (PyTorch tab; code under MIT-0, text
CC BY-SA 4.0). Written after its formulation, not copied (the search tools' terms keep public
code out of this repository's commits): reshape (B, T, h, -1), permute(0, 2, 1, 3), then the
(B*h, T, d_h) layout for a batched bmm; the way back reshapes (-1, h, T, d_h), permutes and
reshapes to (B, T, -1); the positional angles are arange(max_len).reshape(-1, 1) divided by
torch.pow(10000, arange(0, d, 2) / d), sine in the even columns, cosine in the odd ones.
Changes for the contract: split_heads stops at the 4-D (B, h, T, d_h) step of transpose_qkv
(the contract's layout) and forward does the final reshape to (B*h, T, d_h); merge_heads takes
(B, h, T, d_h), so transpose_output's first reshape is not needed; d2l's four ``nn.LazyLinear``
W_q, W_k, W_v, W_o become ``in_proj_weight``/``in_proj_bias`` (cut in three, F.linear) and
``out_proj`` with nn.MultiheadAttention's names, and bias follows the ``bias`` argument; d2l's
``valid_lens`` (repeated per head with repeat_interleave) becomes the contract's boolean mask
(True = blocked), broadcast to (B, h, n_q, n_k) and reshaped to (B*h, n_q, n_k) the same way;
masked_softmax's -1e6 fill becomes -inf with the reference's guarded softmax (a fully blocked
query gets zero weights); dropout is dropped and the weights are returned per head; the table
is returned (float32, as d2l builds it) rather than added to X, with ValueErrors the contract
asks for.
"""
BUG = ("/ math.sqrt(d)", "")  # forget to scale the scores
BUG_NAMES = ["no_scaling"]


def split_heads(x, n_heads):
    if x.shape[2] % n_heads != 0:
        raise ValueError(f"num_hiddens = {x.shape[2]} is not divisible by num_heads = {n_heads}")
    x = x.reshape(x.shape[0], x.shape[1], n_heads, -1)
    return x.permute(0, 2, 1, 3)


def merge_heads(x):
    x = x.permute(0, 2, 1, 3)
    return x.reshape(x.shape[0], x.shape[1], -1)


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"num_hiddens must be even, got {d_model}")
    P = torch.zeros((n_positions, d_model))  # noqa: F821
    X = torch.arange(n_positions, dtype=torch.float32).reshape(-1, 1) / torch.pow(  # noqa: F821
        10000, torch.arange(0, d_model, 2, dtype=torch.float32) / d_model  # noqa: F821
    )
    P[:, 0::2] = torch.sin(X)  # noqa: F821
    P[:, 1::2] = torch.cos(X)  # noqa: F821
    return P


class MultiHeadAttention(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"num_hiddens = {d_model} is not divisible by num_heads = {n_heads}")
        self.num_heads = n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))  # noqa: F821
        nn.init.xavier_uniform_(self.in_proj_weight)  # noqa: F821
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))  # noqa: F821
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # noqa: F821

    def forward(self, query, key, value, mask=None):
        W_q, W_k, W_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)

        def transpose_qkv(X):  # (B, T, d) -> (B*h, T, d_h)
            X = split_heads(X, self.num_heads)
            return X.reshape(-1, X.shape[2], X.shape[3])

        queries = transpose_qkv(F.linear(query, W_q, b_q))  # noqa: F821
        keys = transpose_qkv(F.linear(key, W_k, b_k))  # noqa: F821
        values = transpose_qkv(F.linear(value, W_v, b_v))  # noqa: F821
        # DotProductAttention on (B*h, n, d_h)
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # noqa: F821
        if mask is not None:
            B, n_q, n_k = query.shape[0], scores.shape[1], scores.shape[2]
            blocked = mask.expand(B, self.num_heads, n_q, n_k).reshape(-1, n_q, n_k)
            scores = scores.masked_fill(blocked, float("-inf"))
        attention_weights = _softmax_last(scores)  # noqa: F821
        output = torch.bmm(attention_weights, values)  # noqa: F821
        # transpose_output: (B*h, n_q, d_h) -> (B, h, n_q, d_h) -> (B, n_q, d)
        output = output.reshape(-1, self.num_heads, output.shape[1], output.shape[2])
        output_concat = merge_heads(output)
        weights = attention_weights.reshape(-1, self.num_heads, attention_weights.shape[1], attention_weights.shape[2])
        return self.out_proj(output_concat), weights
