"""Sine and cosine swapped in the position table

PE[pos, 2i] (even columns) = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1]
(odd columns) = cos(the same angle). Row 0 must therefore be [0, 1, 0, 1, ...].
Your even columns hold the cosine and the odd ones the sine.
"""
CAUGHT_BY = [
    "hidden/test_positions.py::test_matches_formula",
    "public/test_multihead_public.py::test_sinusoidal_positions_small",
]


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]
    angles = pos / 10000.0 ** (two_i / d_model)
    pe = torch.empty(n_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe.float()
