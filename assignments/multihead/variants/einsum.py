"""einsum style: heads via view/permute, scores and reads with torch.einsum, positions in float32 (the course recipe)."""


def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("d must be divisible by n_heads")
    return x.view(B, T, n_heads, d // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, h, T, d_h = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(B, T, h * d_h)


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2:
        raise ValueError("d_model must be even")
    pos = torch.arange(n_positions)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(n_positions, d_model)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        self.h = n_heads
        self.in_proj_weight = nn.Parameter(torch.randn(3 * d_model, d_model) / math.sqrt(d_model))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model)) if bias else None
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        d = query.shape[-1]
        W = self.in_proj_weight.view(3, d, d)
        qkv_bias = self.in_proj_bias.view(3, 1, 1, d) if self.in_proj_bias is not None else torch.zeros(3, 1, 1, d, dtype=query.dtype)
        q = torch.einsum("bnd,ed->bne", query, W[0]) + qkv_bias[0]
        k = torch.einsum("bnd,ed->bne", key, W[1]) + qkv_bias[1]
        v = torch.einsum("bnd,ed->bne", value, W[2]) + qkv_bias[2]
        q, k, v = (split_heads(t, self.h) for t in (q, k, v))
        s = torch.einsum("bhqc,bhkc->bhqk", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            s = s.masked_fill(mask, -math.inf)
        s_max = s.amax(-1, keepdim=True).nan_to_num(0.0, neginf=0.0)
        lse = (s - s_max).exp().sum(-1, keepdim=True).log() + s_max       # log-sum-exp, -inf for a blocked row
        w = torch.where(torch.isinf(lse), torch.zeros_like(s), (s - lse.nan_to_num(0.0, neginf=0.0)).exp())
        out = torch.einsum("bhqk,bhkc->bhqc", w, v)
        return self.out_proj(merge_heads(out)), w
