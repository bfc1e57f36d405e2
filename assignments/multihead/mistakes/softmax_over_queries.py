"""Softmax taken over the queries (dim=-2) instead of the keys

The scores are (B, h, n_q, n_k): row i holds query i's scores for every key,
and each query's weights over the keys must sum to 1, so the softmax runs over
the last axis (dim=-1). Normalising over dim=-2 makes each *key's* column sum to 1.
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
        w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        q = split_heads(F.linear(query, w_q, b_q), self.n_heads)
        k = split_heads(F.linear(key, w_k, b_k), self.n_heads)
        v = split_heads(F.linear(value, w_v, b_v), self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = _softmax_last(scores.transpose(-2, -1)).transpose(-2, -1)
        return self.out_proj(merge_heads(weights @ v)), weights
