"""K and V taken from the wrong slices of in_proj_weight (swapped)

``in_proj_weight`` stacks [W_Q; W_K; W_V] along its rows: rows [0, d) give the
queries, [d, 2d) the keys, [2d, 3d) the values (``chunk(3, dim=0)`` in that
order), and ``in_proj_bias`` splits the same way. Your keys and values come from
each other's slices.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_matches_torch_small",
]


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        w_q, w_v, w_k = self.in_proj_weight.chunk(3, dim=0)
        b_q, b_v, b_k = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        q = split_heads(F.linear(query, w_q, b_q), self.n_heads)
        k = split_heads(F.linear(key, w_k, b_k), self.n_heads)
        v = split_heads(F.linear(value, w_v, b_v), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = _softmax_last(scores)
        return self.out_proj(merge_heads(weights @ v)), weights
