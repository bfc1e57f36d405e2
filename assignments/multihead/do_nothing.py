"""multihead, computing nothing: zeros of the right shapes, no parameters, no checks (appended to the reference)."""


def split_heads(x, n_heads):
    B, T, d = x.shape
    return torch.zeros(B, n_heads, T, d // n_heads, dtype=x.dtype)  # noqa: F821


def merge_heads(x):
    B, h, T, dh = x.shape
    return torch.zeros(B, T, h * dh, dtype=x.dtype)  # noqa: F821


def sinusoidal_positions(n_positions, d_model):
    return torch.zeros(n_positions, d_model)  # noqa: F821


class MultiHeadAttention(nn.Module):  # noqa: F821
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        self.n_heads = n_heads

    def forward(self, query, key, value, mask=None):
        B, n_q, d = query.shape
        n_k = key.shape[1]
        weights = torch.full((B, self.n_heads, n_q, n_k), 1.0 / n_k, dtype=query.dtype)  # noqa: F821
        return torch.zeros(B, n_q, d, dtype=query.dtype), weights  # noqa: F821
