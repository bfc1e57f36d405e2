"""ppmi gives NaN for a word with no counts (no zero handling)

Your PPMI has NaN entries for a word with no counts at all (and everywhere for an all-zero matrix): P(w) = 0
makes P(w, c) / (P(w) P(c)) = 0 / 0 = NaN, and np.maximum(NaN, 0) is still NaN. Silencing the warning with
np.errstate is not enough: compute the ratio only where C > 0 (np.divide(..., out=np.ones_like(C), where=C > 0))
and return zeros when C.sum() is 0.
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_all_zero_matrix",
    "hidden/test_ppmi.py::test_zero_counts",
]
PATCH = [('if total <= 0:\n    return np.zeros_like(C)\n', ''),
 ('counted = C > 0\n'
  'ratio = np.ones_like(C)\n'
  'np.divide(C / total, p_w * p_c, out=ratio, where=counted)\n'
  'return np.maximum(np.log(ratio), 0.0)\n',
  'with np.errstate(divide="ignore", invalid="ignore"):\n'
  '    return np.maximum(np.log(C / total / (p_w * p_c)), 0)\n')]
