"""top-p applies the nucleus mask in sorted order: it keeps the wrong tokens.

Your nucleus is computed on the probabilities sorted from the most probable down, and the resulting mask (True for
the tokens kept) is applied to the unsorted probabilities as it is: position i of the mask is about the i-th most
probable token, not about token i. It looks right only when the logits happen to be sorted already. Put the mask
back in the vocabulary's order with the sort's indices, keep = torch.zeros_like(keep_sorted).scatter(-1, order,
keep_sorted), before zeroing the dropped tokens.
"""

CAUGHT_BY = [
    "public/test_decoding_public.py::test_probs_worked_example",
    "hidden/test_sampling.py::test_top_p_matches_reference",
    "hidden/test_sampling.py::test_top_p_after_temperature_and_top_k",
]
PATCH = [
    (
        "keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)   # (B, V) back to token order\n",
        "keep = keep_sorted  # the mask left in sorted order\n",
    )
]
