"""Hugging Face transformers' sampling: TemperatureLogitsWarper (scores / T), TopKLogitsWarper and TopPLogitsWarper (ascending sort, cumsum of the softmax, remove where the cumulative mass is <= 1 - top_p, scatter back, masked_fill with -inf), then softmax and torch.multinomial

Source: huggingface/transformers, src/transformers/generation/logits_process.py, classes
``TemperatureLogitsWarper``, ``TopKLogitsWarper`` and ``TopPLogitsWarper``, and the sampling
branch of ``GenerationMixin._sample`` in generation/utils.py (``probs = softmax(next_token_scores)``,
``torch.multinomial(probs, num_samples=1).squeeze(1)``) (Apache-2.0 licence). Written after its
formulation, not copied (the search tools' terms keep public code out of this repository's
commits): the warpers work on logits, each filter writes -inf, and one softmax at the end turns
the filtered logits into the distribution sampled from, in the order temperature, top-k, top-p.
Changes for the contract: HF refuses temperature 0 (it must be strictly positive); here 0 is
greedy, a one-hot on the first argmax, and only a negative temperature is a ValueError (top_k
< 1 and top_p outside (0, 1] too, with the contract's bounds); HF's top-k removes
``scores < topk(scores, k)[0][..., -1, None]``, which keeps every token tied with the k-th,
while the contract keeps exactly k: the kept set here is topk's own indices; min_tokens_to_keep
is 1 (HF's default, so top-p never empties a row); sample_next draws with the caller's
generator and returns the argmax at temperature 0 (HF's greedy path). The cache, forward and
generate come from the reference.
"""
BUG = ("~keep & (scores <= kth)", "scores < kth")  # HF's threshold: ties with the k-th stay
BUG_NAMES = ["top_k_ties_keep_extra"]


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        raise ValueError(f"`temperature` has to be >= 0, but is {temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"`top_k` has to be a strictly positive integer, but is {top_k}")
    if top_p is not None and not 0 < top_p <= 1.0:
        raise ValueError(f"`top_p` has to be a float > 0 and <= 1, but is {top_p}")
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)  # noqa: F821
    scores = logits / temperature  # TemperatureLogitsWarper
    if top_k is not None:  # TopKLogitsWarper
        k = min(top_k, scores.size(-1))
        values, indices = torch.topk(scores, k)  # noqa: F821
        kth = values[..., -1, None]
        keep = torch.zeros_like(scores, dtype=torch.bool).scatter(-1, indices, True)  # noqa: F821
        indices_to_remove = ~keep & (scores <= kth)  # below the k-th, or tied with it but not among topk's k
        scores = scores.masked_fill(indices_to_remove, -float("inf"))
    if top_p is not None:  # TopPLogitsWarper
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)  # noqa: F821
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
        sorted_indices_to_remove[..., -1:] = False  # min_tokens_to_keep = 1
        indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
        scores = scores.masked_fill(indices_to_remove, -float("inf"))
    return scores.softmax(dim=-1)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return torch.argmax(probs, dim=-1)  # noqa: F821
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)  # noqa: F821
