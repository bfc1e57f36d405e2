"""merge_heads reshapes (B, h, T, d_h) straight to (B, T, d), without transposing back

Without ``transpose(1, 2)`` first, the reshape reads head 0's rows for all
positions, then head 1's, ..., so position t receives pieces of other positions'
outputs. merge_heads must be the exact inverse of split_heads: transpose back to
(B, T, h, d_h), then reshape to (B, T, h*d_h), so each position's head outputs
are concatenated side by side.
"""
CAUGHT_BY = [
    "hidden/test_heads.py::test_merge_heads_inverse",
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_merge_heads",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
]
PATCH = [('return x.transpose(1, 2).reshape(B, T, h * d_h)\n', 'return x.reshape(B, T, h * d_h)\n')]
