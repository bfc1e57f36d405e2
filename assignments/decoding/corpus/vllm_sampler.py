"""vLLM's native sampler: one ascending sort of the logits for both filters (top-k masks the sorted logits below position V - k, top-p masks where the ascending cumsum of the softmax is <= 1 - p, the last column always kept), scatter back, softmax; the draw as an exponential race, argmax of probs / q with q ~ Exp(1) from the request's generator

Source: vllm-project/vllm, vllm/v1/sample/ops/topk_topp_sampler.py, functions
``apply_top_k_top_p_pytorch`` (``logits.sort(dim=-1, descending=False)``, the k-th largest
gathered at ``size(1) - k``, ``top_p_mask = probs_sum <= 1 - p``, ``top_p_mask[:, -1] = False``,
``logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)``) and ``random_sample``
(``q.exponential_(generator=generator)``, ``probs.div_(q).argmax(dim=-1)``), with the greedy
path of vllm/v1/sample/sampler.py (``Sampler.greedy_sample``: ``logits.argmax(dim=-1)``)
(Apache-2.0 licence). Written after its formulation, not copied (the search tools' terms keep
public code out of this repository's commits).
Changes for the contract: vLLM's top-k removes ``logits_sort < kth``, which keeps every token
tied with the k-th, while the contract keeps exactly k: here the mask is the first V - k
positions of the (stable) ascending sort; k and p are plain numbers for the whole batch (vLLM:
one per request, as tensors), with the contract's ValueErrors for top_k < 1, top_p outside
(0, 1] and a negative temperature; temperature divides the logits first (vLLM's
``apply_temperature``), and 0 is greedy: a one-hot on the first argmax in next_token_probs,
the argmax itself in sample_next (vLLM routes temperature below 1e-5 to greedy_sample); the
probabilities are computed in the logits' dtype (vLLM: float32); one generator for every row
(vLLM: one per seeded request, the global generator for the others). The cache, forward and
generate come from the reference.
"""
BUG = ("top_p_mask = probs_sum <= 1 - top_p", "top_p_mask = probs_sum < 1 - top_p")  # keeps one at the threshold
BUG_NAMES = ["top_p_keeps_at_threshold"]


def _apply_top_k_top_p(logits, top_k, top_p):
    logits_sort, logits_idx = logits.sort(dim=-1, descending=False, stable=True)
    if top_k is not None and top_k < logits.shape[-1]:
        top_k_mask = torch.zeros_like(logits_sort, dtype=torch.bool)  # noqa: F821
        top_k_mask[:, : logits_sort.size(1) - top_k] = True  # exactly k survive
        logits_sort = logits_sort.masked_fill(top_k_mask, -float("inf"))
    if top_p is not None:
        probs_sort = logits_sort.softmax(dim=-1)
        probs_sum = torch.cumsum(probs_sort, dim=-1)  # noqa: F821
        top_p_mask = probs_sum <= 1 - top_p
        top_p_mask[:, -1] = False  # at least one
        logits_sort = logits_sort.masked_fill(top_p_mask, -float("inf"))
    return logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        raise ValueError(f"temperature must be non-negative, got {temperature}.")
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k}.")
    if top_p is not None and not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}.")
    if temperature == 0:
        return torch.zeros_like(logits).scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)  # noqa: F821
    logits = logits / temperature  # apply_temperature
    logits = _apply_top_k_top_p(logits, top_k, top_p)
    return logits.softmax(dim=-1)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        next_token_probs(logits, temperature, top_k, top_p)  # the argument checks
        return logits.argmax(dim=-1).view(-1)  # greedy_sample
    probs = next_token_probs(logits, temperature, top_k, top_p)
    q = torch.empty_like(probs)  # noqa: F821
    q.exponential_(generator=generator)
    return probs.div(q).argmax(dim=-1).view(-1)
