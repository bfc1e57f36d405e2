"""in_proj_bias ignored when bias=True

nn.MultiheadAttention adds in_proj_bias to the projections: Q = query W_Qᵀ + b_Q,
and likewise for K and V, with b_Q, b_K, b_V = in_proj_bias.chunk(3). Your
projections leave the bias out (it starts at zero, so this only shows once the
bias has been trained or loaded).
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_matches_torch_small",
]


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)
        q = split_heads(query @ w_q.T, self.n_heads)
        k = split_heads(key @ w_k.T, self.n_heads)
        v = split_heads(value @ w_v.T, self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = _softmax_last(scores)
        return self.out_proj(merge_heads(weights @ v)), weights
