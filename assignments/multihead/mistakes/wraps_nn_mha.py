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
    "public/test_multihead_public.py::test_parameter_count_table",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_params.py::test_parameter_names_and_shapes",
    "hidden/test_mha_params.py::test_parameter_count",
]
PATCH = [('class MultiHeadAttention(nn.Module):\n', 'class MultiHeadAttention(nn.MultiheadAttention):\n'),
 ('super().__init__()\n'
  'if d_model % n_heads != 0:\n'
  '    raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")\n'
  'self.d_model = d_model\n',
  'super().__init__(d_model, n_heads, bias=bias, batch_first=True)\n'),
 ('self.d_head = d_model // n_heads\n'
  'self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))\n'
  'nn.init.xavier_uniform_(self.in_proj_weight)\n'
  'if bias:\n'
  '    self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))\n'
  'else:\n'
  '    self.register_parameter("in_proj_bias", None)\n'
  'self.out_proj = nn.Linear(d_model, d_model, bias=bias)\n'
  'if bias:\n'
  '    nn.init.zeros_(self.out_proj.bias)\n',
  ''),
 ('w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)\n'
  'if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n'
  'q = split_heads(F.linear(query, w_q, b_q), self.n_heads)\n'
  'k = split_heads(F.linear(key, w_k, b_k), self.n_heads)\n'
  'v = split_heads(F.linear(value, w_v, b_v), self.n_heads)\n'
  'scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)\n'
  'if mask is not None:\n'
  '    scores = scores.masked_fill(mask, float("-inf"))\n'
  'weights = _softmax_last(scores)\n'
  'heads = weights @ v\n'
  'out = self.out_proj(merge_heads(heads))\n'
  'return out, weights\n',
  'B, n_q, _ = query.shape\n'
  'if mask is not None and mask.dim() == 4:\n'
  '    mask = mask.expand(B, self.n_heads, n_q, key.shape[1]).reshape(-1, n_q, key.shape[1])\n'
  'out, w = super().forward(query, key, value, attn_mask=mask, need_weights=True, '
  'average_attn_weights=False)\n'
  "blocked = torch.isnan(w).all(dim=-1)                                  # torch's NaN rows: fully blocked "
  'queries\n'
  'out = torch.where(blocked.any(dim=1)[..., None], torch.nan_to_num(out), out)\n'
  'if self.out_proj.bias is not None:\n'
  '    out = torch.where(blocked.all(dim=1)[..., None], self.out_proj.bias.expand_as(out), out)\n'
  'return out, torch.nan_to_num(w)\n')]
