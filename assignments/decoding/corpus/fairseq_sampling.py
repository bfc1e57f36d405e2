"""fairseq's Sampling search: temperature divides the decoder output before log_softmax; top-k by lprobs.topk(k); nucleus by a descending sort, mask = cumsum.lt(p), then "one more word" scattered in at mask.cumsum()[..., -1:], the rest filled with 0; torch.multinomial

Source: facebookresearch/fairseq, fairseq/search.py, class ``Sampling`` (``_sample_topp`` and
``step``), and fairseq/sequence_generator.py (``EnsembleModel.forward_decoder``: the decoder
output ``div_(temperature)`` before ``get_normalized_probs(..., log_probs=True)``;
``SequenceGenerator.__init__``'s ``assert temperature > 0``) (MIT licence). Written after its
formulation, not copied (the search tools' terms keep public code out of this repository's
commits): the log-probabilities are exponentiated, sorted in decreasing order and summed
cumulatively; ``mask = cumsum_probs.lt(p)`` marks the words whose running total (themselves
included) is below p; since the mask was computed by 'lt', one more word is needed so that the
mass can exceed p: its position is the mask's count of True, ``mask.cumsum(-1)[..., -1:]``,
clamped to V - 1, and is scattered into the mask; the other words' probabilities are set to 0.
Top-k keeps ``lprobs.topk(k)``'s entries. One draw per row with torch.multinomial.
Changes for the contract: fairseq asserts temperature > 0 and its greedy decoding is beam
search of width 1; here 0 is greedy (a one-hot on the first argmax), a negative temperature, a
top_k < 1 or a top_p outside (0, 1] is a ValueError (fairseq's "off" values -1 are None here);
fairseq applies top-p OR top-k (top-p wins), the contract applies top-k, then top-p on its
result; fairseq returns the truncated sorted probabilities and their indices and lets
multinomial normalise, here both filters scatter back to token order and renormalise, so
next_token_probs returns the distribution itself; the beam axis (bsz x beam x V) is dropped,
rows are (B, V); the caller's generator draws. The cache, forward and generate come from the
reference.
"""
BUG = ("mask = mask.scatter(-1, last_included, True)", "pass")  # forgets the "one more word"
BUG_NAMES = ["top_p_excludes_crossing"]


def _sample_topp(probs, sampling_topp):
    sorted_probs, sorted_indices = probs.sort(descending=True)
    cumsum_probs = sorted_probs.cumsum(dim=-1)
    mask = cumsum_probs.lt(sampling_topp)
    # mask was computed by 'lt': one more word is needed for the mass to exceed p
    cumsum_mask = mask.cumsum(dim=-1)
    last_included = cumsum_mask[:, -1:].clamp(0, mask.size(-1) - 1)
    mask = mask.scatter(-1, last_included, True)
    trimmed_probs = sorted_probs.masked_fill(~mask, 0)
    return torch.zeros_like(probs).scatter(-1, sorted_indices, trimmed_probs)  # noqa: F821


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        raise ValueError("--temperature must be greater than 0 (or 0 for greedy)")
    if top_k is not None and top_k < 1:
        raise ValueError("--sampling-topk must be at least 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError("--sampling-topp must be in (0, 1]")
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)  # noqa: F821
    lprobs = torch.log_softmax(logits / temperature, dim=-1)  # noqa: F821 - forward_decoder, get_normalized_probs
    probs = lprobs.exp()
    if top_k is not None:
        topk_lprobs, top_indices = lprobs.topk(min(top_k, lprobs.size(-1)))
        probs = torch.zeros_like(probs).scatter(-1, top_indices, topk_lprobs.exp())  # noqa: F821
        probs = probs / probs.sum(dim=-1, keepdim=True)
    if top_p is not None:
        probs = _sample_topp(probs, top_p)
        probs = probs / probs.sum(dim=-1, keepdim=True)
    return probs


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return probs.argmax(dim=-1)
    return torch.multinomial(probs, 1, replacement=True, generator=generator).view(-1)  # noqa: F821
