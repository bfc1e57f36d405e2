"""ppmi uses the row sums for both P(w) and P(c)

You used the row sums for the context probability too (P(c) = P(w) transposed). That only works when C is
symmetric; in general P(w) comes from the row sums (axis=1) and P(c) from the COLUMN sums (axis=0).
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
]


def ppmi(C):
    C = np.asarray(C, dtype=np.float64)
    total = C.sum()
    if total <= 0:
        return np.zeros_like(C)
    p_w = C.sum(axis=1, keepdims=True) / total
    p_c = p_w.T
    ratio = np.ones_like(C)
    np.divide(C / total, p_w * p_c, out=ratio, where=(C > 0) & (p_w * p_c > 0))
    return np.maximum(np.log(ratio), 0.0)
