"""padding_mask returns the keep-mask (True at real tokens), the opposite convention.

Your padding_mask is True at positions < length, the tokens that exist (the convention of Hugging Face's
attention_mask). In this course True means BLOCKED: the padding, positions >= lengths[b], is True:
torch.arange(n)[None, :] >= lengths[:, None].
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_padding_mask",
    "public/test_attention_public.py::test_padding_mask_example",
    "hidden/test_masks.py::test_padding_and_causal",
]
PATCH = [('positions = torch.arange(n, device=lengths.device)\nreturn positions[None, :] >= lengths[:, None]\n',
  'return torch.arange(n)[None, :] < lengths[:, None]\n')]
