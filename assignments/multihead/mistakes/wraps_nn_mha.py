"""Uses PyTorch's nn.MultiheadAttention instead of computing attention

This assignment is about writing multi-head attention yourself: subclassing or
calling nn.MultiheadAttention (or F.multi_head_attention_forward /
F.scaled_dot_product_attention) is not allowed, and the grader detects it when
your code runs. Build it from your split_heads / merge_heads: project with
in_proj_weight, softmax(QKᵀ / sqrt(d_h)) per head, concatenate, out_proj.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "hidden/test_mha_params.py::test_init_value_error",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
    "hidden/test_order.py::test_positions_break_equivariance",
]


class MultiHeadAttention(nn.MultiheadAttention):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__(d_model, n_heads, bias=bias, batch_first=True)
        self.n_heads = n_heads

    def forward(self, query, key, value, mask=None):
        B, n_q, _ = query.shape
        if mask is not None and mask.dim() == 4:
            mask = mask.expand(B, self.n_heads, n_q, key.shape[1]).reshape(-1, n_q, key.shape[1])
        out, w = super().forward(query, key, value, attn_mask=mask, need_weights=True, average_attn_weights=False)
        blocked = torch.isnan(w).all(dim=-1)                                  # torch's NaN rows: fully blocked queries
        out = torch.where(blocked.any(dim=1)[..., None], torch.nan_to_num(out), out)
        if self.out_proj.bias is not None:
            out = torch.where(blocked.all(dim=1)[..., None], self.out_proj.bias.expand_as(out), out)
        return out, torch.nan_to_num(w)
