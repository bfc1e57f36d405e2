"""ppmi with log base 2

Your PPMI values are 1/ln 2 = 1.44 times too large: you used np.log2. Information theory often uses bits, but
this assignment (like the course) defines PPMI with the natural log, np.log.
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_ppmi_example",
]


def ppmi(C):
    C = np.asarray(C, dtype=np.float64)
    total = C.sum()
    if total <= 0:
        return np.zeros_like(C)
    p_w = C.sum(axis=1, keepdims=True) / total
    p_c = C.sum(axis=0, keepdims=True) / total
    ratio = np.ones_like(C)
    np.divide(C / total, p_w * p_c, out=ratio, where=C > 0)
    return np.maximum(np.log2(ratio), 0.0)
