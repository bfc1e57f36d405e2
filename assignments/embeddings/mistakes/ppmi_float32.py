"""ppmi computes in float32 (the counts cast to np.float32)

Casting the counts to np.float32 (as code written to save memory often does, hyperwords' among it) keeps about 7
significant digits; the tests give float64 counts and compare to 1e-10. Keep np.float64 from the counts to the
result.
"""
CAUGHT_BY = [
    "hidden/test_ppmi.py::test_all_zero_matrix",
    "hidden/test_ppmi.py::test_matches_reference",
    "hidden/test_ppmi.py::test_zero_counts",
    "public/test_embeddings_public.py::test_ppmi_example",
]
PATCH = [('C = np.asarray(C, dtype=np.float64)\ntotal = C.sum()\n', 'C = np.asarray(C, dtype=np.float32)\ntotal = C.sum()\n')]
