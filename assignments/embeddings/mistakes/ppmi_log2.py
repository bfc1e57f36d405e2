"""ppmi with log base 2

Your PPMI values are 1/ln 2 = 1.44 times too large: you used np.log2. Information theory often uses bits, but
this assignment (like the course) defines PPMI with the natural log, np.log.
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_ppmi_example",
]
PATCH = [('counted = C > 0\n', ''),
 ('np.divide(C / total, p_w * p_c, out=ratio, where=counted)\nreturn np.maximum(np.log(ratio), 0.0)\n',
  'np.divide(C / total, p_w * p_c, out=ratio, where=C > 0)\nreturn np.maximum(np.log2(ratio), 0.0)\n')]
