"""The mask is inverted (True treated as allowed)

In this kit, as in nn.MultiheadAttention's attn_mask, True means *blocked*:
that query may not look at that key. F.scaled_dot_product_attention uses the
opposite convention (True = allowed); the two are easy to mix up. Fill the
scores where the mask is True with -inf.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
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
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = _softmax_last(scores)
        return self.out_proj(merge_heads(weights @ v)), weights
