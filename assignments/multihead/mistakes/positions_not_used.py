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


def sinusoidal_positions(n_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even, got {d_model}")
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]
    angles = (two_i / 10000.0 ** (two_i / d_model)).expand(n_positions, -1)
    pe = torch.empty(n_positions, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()
