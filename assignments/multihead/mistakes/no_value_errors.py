"""No ValueError for impossible sizes (d not divisible by h, odd d_model)

The contract asks for a clear ValueError when d_model is not divisible by
n_heads (in split_heads and in MultiHeadAttention.__init__) and when
sinusoidal_positions gets an odd d_model (sines and cosines come in pairs).
Without the checks the code fails later with a confusing reshape error, or
silently builds heads of the wrong width.
"""
CAUGHT_BY = [
    "hidden/test_heads.py::test_split_heads_value_error",
    "hidden/test_mha_params.py::test_init_value_error",
    "hidden/test_positions.py::test_odd_d_model_raises",
]
PATCH = [('if d % n_heads != 0:\n'
  '    raise ValueError(f"d_model = {d} is not divisible by n_heads = {n_heads}")\n'
  'd_h = d // n_heads\n'
  'return x.reshape(B, T, n_heads, d_h).transpose(1, 2)\n',
  'return x.reshape(B, T, n_heads, d // n_heads).transpose(1, 2)\n'),
 ('if d_model % 2 != 0:\n'
  '    raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")\n',
  ''),
 ('pe[:, 1::2] = torch.cos(angles)\nreturn pe.to(torch.float32)\n',
  'pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])\nreturn pe.float()\n'),
 ('super().__init__()\n'
  'if d_model % n_heads != 0:\n'
  '    raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")\n'
  'self.d_model = d_model\n'
  'self.n_heads = n_heads\n'
  'self.d_head = d_model // n_heads\n',
  'nn.Module.__init__(self)\n'
  'self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads\n'),
 ('if bias:\n'
  '    self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))\n'
  'else:\n'
  '    self.register_parameter("in_proj_bias", None)\n',
  'self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model)) if bias else None\n'),
 ('if bias:\n    nn.init.zeros_(self.out_proj.bias)\n', '')]
