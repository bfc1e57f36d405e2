"""No ValueError for impossible sizes (d not divisible by h, odd d_model)

The contract asks for a clear ValueError when d_model is not divisible by
n_heads (in split_heads and in MultiHeadAttention.__init__) and when
sinusoidal_positions gets an odd d_model (sines and cosines come in pairs).
Without the checks the code fails later with a confusing reshape error, or
silently builds heads of the wrong width.
"""
CAUGHT_BY = [
    "hidden/test_heads.py::test_split_heads_value_error",
    "hidden/test_mha_params.py::test_init_value_error",
    "hidden/test_positions.py::test_odd_d_model_raises",
]


def split_heads(x, n_heads):
    B, T, d = x.shape
    return x.reshape(B, T, n_heads, d // n_heads).transpose(1, 2)


def sinusoidal_positions(n_positions, d_model):
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]
    angles = pos / 10000.0 ** (two_i / d_model)
    pe = torch.empty(n_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe.float()


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_model, n_heads, bias=True):
        nn.Module.__init__(self)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))
        nn.init.xavier_uniform_(self.in_proj_weight)
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model)) if bias else None
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
