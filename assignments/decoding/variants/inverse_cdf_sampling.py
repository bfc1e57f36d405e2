"""filters on the logits (-inf, then one softmax) and draws by inverse CDF with torch.rand(generator=...)."""


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        raise ValueError("temperature must be non-negative")
    if top_k is not None and top_k < 1:
        raise ValueError("top_k must be >= 1")
    if top_p is not None and (top_p <= 0 or top_p > 1):
        raise ValueError("top_p must be in (0, 1]")
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    z = logits / temperature
    if top_k is not None and top_k < z.shape[-1]:
        idx = torch.topk(z, top_k, dim=-1).indices
        keep = torch.zeros_like(z, dtype=torch.bool).scatter(-1, idx, True)
        z = z.masked_fill(~keep, float("-inf"))
    if top_p is not None:
        p = torch.softmax(z, dim=-1)
        sp, si = torch.sort(p, dim=-1, descending=True)
        cum = torch.cumsum(sp, dim=-1)
        drop_sorted = (cum - sp) >= top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, si, drop_sorted)
        z = z.masked_fill(drop, float("-inf"))
    return torch.softmax(z, dim=-1)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return logits.argmax(-1)
    cdf = probs.cumsum(-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=probs.dtype) * cdf[:, -1:]
    idx = torch.searchsorted(cdf, u, right=True)[:, 0]
    # never land on a zero-probability token through round-off at the right end
    last_kept = probs.shape[-1] - 1 - (probs.flip(-1) > 0).long().argmax(-1)
    return torch.minimum(idx, last_kept)
