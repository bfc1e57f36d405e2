"""ppmi keeps negative PMI values (no clip at 0)

Your result has negative entries: that is PMI, not POSITIVE PMI. Pairs that co-occur less often than chance
give unreliable negative values on small corpora, so PPMI replaces them with 0: np.maximum(pmi, 0).
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_ppmi_example",
]
PATCH = [('counted = C > 0\n', ''),
 ('np.divide(C / total, p_w * p_c, out=ratio, where=counted)\nreturn np.maximum(np.log(ratio), 0.0)\n',
  'np.divide(C / total, p_w * p_c, out=ratio, where=C > 0)\nreturn np.log(ratio)\n')]
