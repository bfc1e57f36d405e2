"""softmax ignores its `dim` argument (always the last dimension).

Your softmax is right along the last dimension but ignores `dim`: softmax(x, dim=0)
must make the slices along dim 0 sum to 1. Use `dim` in every reduction
(`x.amax(dim=dim, keepdim=True)`, `e.sum(dim=dim, keepdim=True)`).
"""
CAUGHT_BY = [
    "hidden/test_softmax.py::test_other_dims",
    "hidden/test_softmax.py::test_properties",
    "hidden/test_softmax.py::test_gradients",
]
PATCH = [('m = x.amax(dim=dim, keepdim=True)\n', 'm = x.amax(dim=-1, keepdim=True)\n'),
 ('total = e.sum(dim=dim, keepdim=True)\n', 'total = e.sum(dim=-1, keepdim=True)\n')]
