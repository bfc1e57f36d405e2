"""softmax over the wrong dimension: dim=0 hard-coded.

Your softmax normalises along the first dimension whatever `dim` says, so the
weights of one query are spread over the other queries (or batch entries)
instead of over the keys. Softmax is taken row by row, along the keys: pass
`dim` to `amax(...)` and `sum(...)` with keepdim=True.
"""
CAUGHT_BY = [
    "hidden/test_softmax.py::test_matches_reference",
    "hidden/test_softmax.py::test_other_dims",
    "hidden/test_softmax.py::test_properties",
    "hidden/test_softmax.py::test_neg_inf_entries",
    "hidden/test_softmax.py::test_gradients",
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_properties",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_softmax_all_neg_inf_row",
    "public/test_attention_public.py::test_fully_blocked_query",
    "public/test_attention_public.py::test_shapes",
    "hidden/test_softmax.py::test_large_inputs",
    "hidden/test_softmax.py::test_all_neg_inf_slice",
    "hidden/test_banned.py::test_softmax_by_hand",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('m = x.amax(dim=dim, keepdim=True)\n', 'm = x.amax(dim=0, keepdim=True)\n'),
 ('total = e.sum(dim=dim, keepdim=True)\n', 'total = e.sum(dim=0, keepdim=True)\n')]
