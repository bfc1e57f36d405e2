"""The position is missing from the angle: every row of the table is the same

The angle is pos / 10000^(2i/d_model): it must grow with the position pos.
Your angle depends only on the column, so every position gets the same vector.
Adding the same vector to every token tells the model nothing about order:
"dog bites man" and "man bites dog" still look identical to self-attention.
"""
CAUGHT_BY = [
    "hidden/test_positions.py::test_matches_formula",
    "hidden/test_positions.py::test_rows_distinct",
    "hidden/test_order.py::test_positions_break_equivariance",
    "public/test_multihead_public.py::test_sinusoidal_positions_small",
]
PATCH = [('    raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")\n'
  'pos = torch.arange(n_positions, dtype=torch.float64)[:, None]\n',
  'raise ValueError(f"d_model must be even, got {d_model}")\n'),
 ('angles = pos / 10000.0 ** (two_i / d_model)\n',
  'angles = (two_i / 10000.0 ** (two_i / d_model)).expand(n_positions, -1)\n'),
 ('return pe.to(torch.float32)\n', 'return pe.float()\n')]
