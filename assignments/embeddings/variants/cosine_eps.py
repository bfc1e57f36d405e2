"""cosine_similarity with an epsilon of 1e-8 added to each norm (the contract allows it)

A common guard against zero vectors, e.g. ``x / (norm(x) + 1e-8)``: within the tests' tolerance.
"""


def cosine_similarity(a, b):
    a = np.asarray(a, dtype=np.float64)  # noqa: F821
    b = np.asarray(b, dtype=np.float64)  # noqa: F821
    return float((a / (np.linalg.norm(a) + 1e-8)) @ (b / (np.linalg.norm(b) + 1e-8)))  # noqa: F821
