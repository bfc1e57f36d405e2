"""nanoGPT's CausalSelfAttention: one fused c_attn projection split into q, k, v with .split(n_embd, dim=2), heads by view(B, T, nh, C // nh).transpose(1, 2), scores times 1.0 / math.sqrt(k.size(-1))

Source: karpathy/nanoGPT, model.py, class ``CausalSelfAttention`` (the manual, non-flash path;
MIT licence); minGPT's mingpt/model.py has the same steps with three separate linears. Written
after its formulation, not copied (the search tools' terms keep public code out of this
repository's commits): the fused projection c_attn(x) is split into q, k, v along the feature
axis; each is viewed as (B, T, n_head, C // n_head) and transposed to (B, nh, T, hs);
att = (q @ kᵀ) * (1.0 / sqrt(k.size(-1))), masked_fill with -inf, softmax, y = att @ v, and
y.transpose(1, 2).contiguous().view(B, T, C) before the output projection c_proj.
Changes for the contract: c_attn's weight and bias are nn.MultiheadAttention's
``in_proj_weight`` (3C, C) and ``in_proj_bias`` (the same stacking of q, k, v that nanoGPT's
split reads), applied with F.linear; c_proj is ``out_proj``; the source is self-attention only,
so for cross-attention the fused projection runs on query, key and value in turn and keeps the
q, k and v part of each split (identical to the source when query is key is value); the
source's causal buffer (``bias[:, :, :T, :T] == 0`` is blocked) becomes the caller's mask, True
= blocked, 2-D or 4-D; F.softmax becomes the reference's guarded softmax (a fully blocked query
gets zero weights, never NaN); dropout is dropped, the weights are returned; the assert is a
ValueError; ``bias`` controls both projections' biases. The positional table is not part of
nanoGPT (it learns wpe) and comes from the reference.
"""
BUG = ("math.sqrt(k.size(-1))", "math.sqrt(C)")  # scaled by the model width, not the head width
BUG_NAMES = ["scale_by_d_model"]


def split_heads(x, n_heads):
    B, T, C = x.size()
    if C % n_heads != 0:
        raise ValueError(f"n_embd = {C} is not divisible by n_head = {n_heads}")
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)


def merge_heads(x):
    B, nh, T, hs = x.size()
    return x.transpose(1, 2).contiguous().view(B, T, nh * hs)


class MultiHeadAttention(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"n_embd = {d_model} is not divisible by n_head = {n_heads}")
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))  # noqa: F821
        nn.init.normal_(self.in_proj_weight, mean=0.0, std=0.02)  # noqa: F821
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))  # noqa: F821
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)  # noqa: F821
        self.n_head = n_heads
        self.n_embd = d_model

    def c_attn(self, x):
        return F.linear(x, self.in_proj_weight, self.in_proj_bias)  # noqa: F821

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        q = self.c_attn(query).split(self.n_embd, dim=2)[0]
        k = self.c_attn(key).split(self.n_embd, dim=2)[1]
        v = self.c_attn(value).split(self.n_embd, dim=2)[2]
        q = split_heads(q, self.n_head)  # (B, nh, T, hs)
        k = split_heads(k, self.n_head)  # (B, nh, S, hs)
        v = split_heads(v, self.n_head)  # (B, nh, S, hs)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # noqa: F821
        if mask is not None:
            att = att.masked_fill(mask, float("-inf"))
        att = _softmax_last(att)  # noqa: F821
        y = att @ v  # (B, nh, T, hs)
        y = merge_heads(y)  # re-assemble all head outputs side by side
        return self.out_proj(y), att
