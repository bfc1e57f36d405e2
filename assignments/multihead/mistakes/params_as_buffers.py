"""Projection weights stored as buffers, not parameters: they never train

``register_buffer`` puts a tensor in the state_dict (so loading works) but not
in ``parameters()``: the optimiser never sees it and backward gives it no
gradient. W_Q, W_K, W_V (in_proj_weight) and their bias must be
``nn.Parameter``s, like out_proj's weight and bias.
"""
CAUGHT_BY = [
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
]


class MultiHeadAttention(MultiHeadAttention):
    def __init__(self, d_model, n_heads, bias=True):
        nn.Module.__init__(self)
        if d_model % n_heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.register_buffer("in_proj_weight", nn.init.xavier_uniform_(torch.empty(3 * d_model, d_model)))
        self.register_buffer("in_proj_bias", torch.zeros(3 * d_model) if bias else None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
