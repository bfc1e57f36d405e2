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
]


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float64)[None, :]
    angles = pos / 10000.0 ** (i / d_model)
    pe = torch.empty(n_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()
