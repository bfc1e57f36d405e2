"""ppmi with the joint probability normalised per row

You divided each count by its ROW sum, which gives P(c | w), and then divided again by P(w) P(c). The joint
probability P(w, c) divides every count by the same grand total C.sum(); then
P(w, c) / (P(w) P(c)) = P(c | w) / P(c).
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_course_results",
    "public/test_embeddings_public.py::test_ppmi_example",
]
PATCH = [('p_w = C.sum(axis=1, keepdims=True) / total\n',
  'rows = C.sum(axis=1, keepdims=True)\np_w = rows / total\n'),
 ('counted = C > 0\n', 'joint = np.divide(C, rows, out=np.zeros_like(C), where=rows > 0)\n'),
 ('np.divide(C / total, p_w * p_c, out=ratio, where=counted)\n',
  'np.divide(joint, p_w * p_c, out=ratio, where=C > 0)\n')]
