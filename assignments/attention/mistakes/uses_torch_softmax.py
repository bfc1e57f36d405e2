"""Calls PyTorch's softmax instead of writing it.

Your softmax calls torch.softmax (or F.softmax, Tensor.softmax, nn.Softmax):
the assignment is to write it yourself, subtracting the max, exponentiating
and normalising ("stable softmax" in the handout). Calling your own softmax
from your attention is fine.
"""
CAUGHT_BY = [
    "hidden/test_banned.py::test_softmax_by_hand",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_softmax.py::test_matches_reference",
    "hidden/test_softmax.py::test_large_inputs",
    "hidden/test_softmax.py::test_gradients",
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_gradients",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_softmax_all_neg_inf_row",
    "public/test_attention_public.py::test_fully_blocked_query",
    "public/test_attention_public.py::test_softmax_course_example",
    "public/test_attention_public.py::test_shapes",
    "hidden/test_softmax.py::test_other_dims",
    "hidden/test_softmax.py::test_properties",
    "hidden/test_softmax.py::test_neg_inf_entries",
    "hidden/test_softmax.py::test_all_neg_inf_slice",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('m = x.amax(dim=dim, keepdim=True)\n'
  'm = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n'
  'e = torch.exp(x - m)\n'
  'total = e.sum(dim=dim, keepdim=True)\n'
  'return e / torch.where(total > 0, total, torch.ones_like(total))\n',
  'return torch.softmax(x, dim=dim)\n')]
