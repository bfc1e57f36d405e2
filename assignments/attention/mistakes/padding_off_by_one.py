"""Padding mask off by one: positions > length blocked instead of >= length.

Your padding mask lets each query see one padding position: a sequence of
length L has real tokens at positions 0..L-1, so position L is already
padding. Block positions >= lengths[b].
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_padding_mask",
    "hidden/test_masks.py::test_padding_and_causal",
    "public/test_attention_public.py::test_padding_mask_example",
]
PATCH = [('positions = torch.arange(n, device=lengths.device)\nreturn positions[None, :] >= lengths[:, None]\n',
  'return torch.arange(n)[None, :] > lengths[:, None]\n')]
