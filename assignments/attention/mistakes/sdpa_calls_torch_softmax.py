"""scaled_dot_product_attention calls PyTorch's softmax instead of yours.

Your attention calls torch.softmax (or F.softmax, Tensor.softmax) on the scores. Your own softmax is
the one to use here: call softmax(scores, dim=-1), the function you wrote above.
"""
CAUGHT_BY = [
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_matches_reference",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_shapes",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('weights = softmax(scores, dim=-1)\noutput = weights @ v\nreturn output, weights\n',
  'weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)\nreturn weights @ v, weights\n')]
