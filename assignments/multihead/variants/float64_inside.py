"""Computes in float64 internally (one fused qkv projection) and returns the input's dtype."""


class MultiHeadAttention(MultiHeadAttention):
    def forward(self, query, key, value, mask=None):
        dtype = query.dtype
        d = self.d_model
        W = self.in_proj_weight.double()
        b = self.in_proj_bias.double() if self.in_proj_bias is not None else None
        if query is key and key is value:
            q, k, v = F.linear(query.double(), W, b).split(d, dim=-1)
        else:
            bs = b.split(d) if b is not None else (None, None, None)
            q = F.linear(query.double(), W[:d], bs[0])
            k = F.linear(key.double(), W[d:2 * d], bs[1])
            v = F.linear(value.double(), W[2 * d:], bs[2])
        q, k, v = (split_heads(t, self.n_heads) for t in (q, k, v))
        scores = torch.matmul(q / math.sqrt(self.d_head), k.transpose(-1, -2))
        if mask is not None:
            scores = torch.where(mask, torch.tensor(float("-inf"), dtype=torch.float64), scores)
        weights = _softmax_last(scores)
        heads = merge_heads(weights @ v)
        W_o = self.out_proj.weight.double()
        b_o = self.out_proj.bias.double() if self.out_proj.bias is not None else None
        return F.linear(heads, W_o, b_o).to(dtype), weights.to(dtype)
