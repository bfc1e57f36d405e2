"""ppmi takes the log of every entry and fixes the zeros afterwards: right values, but a RuntimeWarning

np.log(0) is -inf and 0/0 is NaN: NumPy warns ("divide by zero encountered in log") every time, even if
the entry is clipped or replaced afterwards (hyperwords' and many notebooks' form). The contract asks
for no warnings. Compute only where C > 0 (np.divide(..., out=..., where=C > 0)) or wrap the lines in
`with np.errstate(divide='ignore', invalid='ignore'):`.
"""
CAUGHT_BY = ["hidden/test_ppmi.py::test_zero_counts", "hidden/test_ppmi.py::test_all_zero_matrix"]
PATCH = [('ratio = np.ones_like(C)                                     # (V, V) log(1) = 0 where nothing was counted\n'
  'np.divide(C / total, p_w * p_c, out=ratio, where=counted)   # (V, V) P(w,c) / (P(w) P(c))\n'
  'return np.maximum(np.log(ratio), 0.0)                       # (V, V) clip negative PMI to 0\n',
  'pmi = np.log((C / total) / (p_w * p_c))\n'
  'return np.where(counted, np.maximum(np.nan_to_num(pmi, nan=0.0, neginf=0.0), 0.0), 0.0)\n')]
