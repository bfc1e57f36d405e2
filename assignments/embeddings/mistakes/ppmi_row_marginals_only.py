"""ppmi uses the row sums for both P(w) and P(c)

You used the row sums for the context probability too (P(c) = P(w) transposed). That only works when C is
symmetric; in general P(w) comes from the row sums (axis=1) and P(c) from the COLUMN sums (axis=0).
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
]
PATCH = [('p_c = C.sum(axis=0, keepdims=True) / total\ncounted = C > 0\n', 'p_c = p_w.T\n'),
 ('np.divide(C / total, p_w * p_c, out=ratio, where=counted)\n',
  'np.divide(C / total, p_w * p_c, out=ratio, where=(C > 0) & (p_w * p_c > 0))\n')]
