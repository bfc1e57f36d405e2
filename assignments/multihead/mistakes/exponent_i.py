"""Position frequencies use 10000^(i/d_model) instead of 10000^(2i/d_model)

In PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) the exponent is the even column
index 2i over d_model, so the wavelengths run from 2π up to 2π·10000 across the
whole table. With i (the pair index) in place of 2i, the last pair's
wavelength only reaches about 2π·100: the frequencies are wrong for every
column pair after the first.
"""
CAUGHT_BY = [
    "hidden/test_positions.py::test_matches_formula",
    "public/test_multihead_public.py::test_sinusoidal_positions_small",
    "hidden/test_positions.py::test_rows_distinct",
    "hidden/test_order.py::test_positions_break_equivariance",
]
PATCH = [('raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")\n',
  'raise ValueError(f"d_model must be even, got {d_model}")\n'),
 ('two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]\n'
  'angles = pos / 10000.0 ** (two_i / d_model)\n',
  'i = torch.arange(d_model // 2, dtype=torch.float64)[None, :]\nangles = pos / 10000.0 ** (i / d_model)\n'),
 ('return pe.to(torch.float32)\n', 'return pe.float()\n')]
