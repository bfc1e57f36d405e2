"""ppmi with log base 10

Your PPMI values are ln 10 = 2.30 times too small: you used np.log10. PPMI here uses the natural log, np.log.
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_ppmi_example",
]
PATCH = [('counted = C > 0\n', ''),
 ('np.divide(C / total, p_w * p_c, out=ratio, where=counted)\nreturn np.maximum(np.log(ratio), 0.0)\n',
  'np.divide(C / total, p_w * p_c, out=ratio, where=C > 0)\nreturn np.maximum(np.log10(ratio), 0.0)\n')]
