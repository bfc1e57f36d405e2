"""Blocked scores set to -1e9 instead of -inf: a fully blocked query gets uniform weights

Filling with a large negative number works while a query has at least one open
key, but when every key is blocked all its scores are equal (-1e9) and the
softmax spreads weight 1/n_k over keys it may not see. Use -inf, and turn an
all -inf row into zero weights (not NaN): the contract says a fully blocked
query's output row is just out_proj.bias.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
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
            scores = scores.masked_fill(mask, -1e9)
        weights = _softmax_last(scores)
        return self.out_proj(merge_heads(weights @ v)), weights
