"""ppmi keeps negative PMI values (no clip at 0)

Your result has negative entries: that is PMI, not POSITIVE PMI. Pairs that co-occur less often than chance
give unreliable negative values on small corpora, so PPMI replaces them with 0: np.maximum(pmi, 0).
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
    return np.log(ratio)
