"""Every head gets its own full-width (d x d) projections: parameters grow with h

The course's table: at d_model = 64, 1, 2, 4 and 8 heads all have
4·64² + 4·64 = 16,640 parameters. Heads do not add weights; they cut the same
W_Q, W_K, W_V (each d x d) into h slices of width d/h. Your module builds
separate d x d projections per head, so it has (3h + 1)·d² + ... parameters and
cannot load nn.MultiheadAttention's weights.
"""
CAUGHT_BY = [
    "hidden/test_mha_params.py::test_parameter_names_and_shapes",
    "hidden/test_mha_params.py::test_parameter_count",
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_parameter_count_table",
    "public/test_multihead_public.py::test_matches_torch_small",
]


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_model, n_heads, bias=True):
        nn.Module.__init__(self)
        if d_model % n_heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model
        self.in_proj_weight = nn.Parameter(nn.init.xavier_uniform_(torch.empty(3 * n_heads * d_model, d_model)))
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * n_heads * d_model))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(n_heads * d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)          # each (h*d, d)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        q = split_heads(F.linear(query, w_q, b_q), self.n_heads)     # (B, h, n_q, d)
        k = split_heads(F.linear(key, w_k, b_k), self.n_heads)
        v = split_heads(F.linear(value, w_v, b_v), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = _softmax_last(scores)
        return self.out_proj(merge_heads(weights @ v)), weights
