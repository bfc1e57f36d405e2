"""Loop over heads with explicit slices (the course's hand-written version), torch.softmax with blocked rows zeroed."""


def split_heads(x, n_heads):
    d = x.shape[-1]
    if d % n_heads != 0:
        raise ValueError("d_model must be divisible by n_heads")
    d_h = d // n_heads
    return torch.stack([x[..., i * d_h:(i + 1) * d_h] for i in range(n_heads)], dim=1)


def merge_heads(x):
    return torch.cat([x[:, i] for i in range(x.shape[1])], dim=-1)


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError("odd d_model")
    pe = torch.zeros(n_positions, d_model, dtype=torch.float64)
    for i in range(d_model // 2):
        angle = torch.arange(n_positions, dtype=torch.float64) / 10000 ** (2 * i / d_model)
        pe[:, 2 * i] = torch.sin(angle)
        pe[:, 2 * i + 1] = torch.cos(angle)
    return pe.to(torch.float32)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.d_model, self.n_heads = d_model, n_heads
        self.in_proj_weight = nn.Parameter(nn.init.xavier_uniform_(torch.empty(3 * d_model, d_model)))
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))
        else:
            self.in_proj_bias = None
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        d, h = self.d_model, self.n_heads
        dk = d // h
        B, n_q, _ = query.shape
        n_k = key.shape[1]
        if mask is not None:
            mask = mask.expand(B, h, n_q, n_k)  # (n_q, n_k) and every 4-D shape broadcast the same way
        heads, all_w = [], []
        for i in range(h):
            rows = [slice(j * d + i * dk, j * d + (i + 1) * dk) for j in range(3)]
            Wq, Wk, Wv = (self.in_proj_weight[r] for r in rows)
            if self.in_proj_bias is not None:
                bq, bk, bv = (self.in_proj_bias[r] for r in rows)
                Q, K, V = query @ Wq.T + bq, key @ Wk.T + bk, value @ Wv.T + bv
            else:
                Q, K, V = query @ Wq.T, key @ Wk.T, value @ Wv.T
            s = Q @ K.transpose(1, 2) / dk ** 0.5
            if mask is not None:
                s = s.masked_fill(mask[:, i], float("-inf"))
            dead = torch.isneginf(s).all(dim=-1, keepdim=True)
            w = torch.softmax(s.masked_fill(dead, 0.0), dim=-1).masked_fill(dead, 0.0)
            heads.append(w @ V)
            all_w.append(w)
        return self.out_proj(torch.cat(heads, dim=-1)), torch.stack(all_w, dim=1)
