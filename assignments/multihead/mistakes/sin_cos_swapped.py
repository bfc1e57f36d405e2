"""Sine and cosine swapped in the position table

PE[pos, 2i] (even columns) = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1]
(odd columns) = cos(the same angle). Row 0 must therefore be [0, 1, 0, 1, ...].
Your even columns hold the cosine and the odd ones the sine.
"""
CAUGHT_BY = [
    "hidden/test_positions.py::test_matches_formula",
    "public/test_multihead_public.py::test_sinusoidal_positions_small",
    "hidden/test_positions.py::test_rows_distinct",
    "hidden/test_order.py::test_positions_break_equivariance",
]
PATCH = [('raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")\n',
  'raise ValueError(f"d_model must be even, got {d_model}")\n'),
 ('pe[:, 0::2] = torch.sin(angles)\npe[:, 1::2] = torch.cos(angles)\nreturn pe.to(torch.float32)\n',
  'pe[:, 0::2] = torch.cos(angles)\npe[:, 1::2] = torch.sin(angles)\nreturn pe.float()\n')]
