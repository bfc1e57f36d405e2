"""split_heads reshapes (B, T, d) straight to (B, h, T, d_h), without the transpose

A direct ``x.view(B, h, T, d_h)`` (or reshape) cuts the flat memory of the
sequence into h chunks: "head 0" then holds the first T*d/h numbers, i.e. all
the features of the first T/h positions, so heads mix positions instead of
splitting features. Reshape to (B, T, h, d_h) first, then ``transpose(1, 2)``
so head i holds features [i*d/h, (i+1)*d/h) of every position. (It also breaks
self-attention's permutation equivariance: positions leak into each other.)
"""
CAUGHT_BY = [
    "hidden/test_heads.py::test_split_heads_layout",
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
    "public/test_multihead_public.py::test_split_heads",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_heads.py::test_split_heads_value_error",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
]
PATCH = [('d_h = d // n_heads\nreturn x.reshape(B, T, n_heads, d_h).transpose(1, 2)\n',
  'return x.reshape(B, n_heads, T, d // n_heads)\n')]
