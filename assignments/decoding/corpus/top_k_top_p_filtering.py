"""The classic top_k_top_p_filtering (Thomas Wolf's gist, later transformers' modeling_utils): top-k by the k-th largest logit; nucleus by a descending sort, cumsum of the softmax, a remove mask shifted one to the right so the crossing token stays, token 0 always kept

Source: the function ``top_k_top_p_filtering`` of Thomas Wolf's GitHub gist "Sample the next
token from a probability distribution using top-k and/or nucleus (top-p) sampling"
(thomwolf/1a5a29f6962089e871b94cbd09daf317), copied into huggingface/transformers as
src/transformers/modeling_utils.py / generation_utils.py ``top_k_top_p_filtering`` (Apache-2.0
licence) and into many chatbot repositories. Written after its formulation, not copied (the
search tools' terms keep public code out of this repository's commits): sort the logits in
decreasing order, cumulative sum of their softmax, remove where it passes top_p, shift that mask
right by one and never remove the first token, map back through the sorted indices and fill the
removed logits with -inf; a final softmax and torch.multinomial sample.
Changes for the contract: temperature first (the gist's caller divides the logits by it), 0 being
greedy (a one-hot on the first argmax) and a negative value a ValueError, as are top_k < 1 and
top_p outside (0, 1] (the gist treats 0 as "off"); the gist's top-k fill ``logits <
topk(logits, k)[0][..., -1, None]`` keeps every token tied with the k-th, the contract keeps
exactly k, so the removed set is the complement of topk's indices; the gist's nucleus removes
where the cumulative mass is ``> top_p`` before the shift, which keeps a token whose preceding
mass equals top_p exactly, where the contract says "kept when the mass before it is below p"
(the hidden test_top_p_exact_threshold meets that equality with exact binary fractions, and the
gist's rule is the catalogued mistake top_p_keeps_at_threshold): here the removal is where it is
``>= top_p``, then the same shift; the gist handles one row (1-D indexing), here a batch
(scatter back to token order); the caller's generator. The cache, forward and generate come
from the reference.
"""

import torch.nn.functional as F

# The most probable token is no longer protected: after the shift, index 0 keeps its own "passes top_p" flag, so a
# row whose top token alone exceeds top_p loses every token. (Deleting the shift instead, the classic nucleus bug, is
# named top_p_before_temperature in test_top_p_after_temperature_and_top_k[temperature=3, top_p=0.5], where the two
# wrong nuclei coincide, so it cannot be this entry's declared bug.)
BUG = ("sorted_indices_to_remove[..., 0] = False", "pass")
BUG_NAMES = ["top_p_excludes_crossing"]


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)  # noqa: F821
    filter_value = -float("Inf")
    logits = logits / temperature
    if top_k is not None:
        top_k = min(top_k, logits.size(-1))  # safety check
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, torch.topk(logits, top_k)[1], True)  # noqa: F821
        logits = logits.masked_fill(~keep, filter_value)
    if top_p is not None:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)  # noqa: F821
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        # remove tokens with cumulative probability at or above the threshold (the gist: above)
        sorted_indices_to_remove = cumulative_probs >= top_p
        # shift the indices to the right to keep also the first token above the threshold
        shifted = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 1:] = shifted
        sorted_indices_to_remove[..., 0] = False
        indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
        logits = logits.masked_fill(indices_to_remove, filter_value)
    return F.softmax(logits, dim=-1)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probabilities = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return probabilities.argmax(dim=-1)
    return torch.multinomial(probabilities, 1, generator=generator)[:, 0]  # noqa: F821
