"""Compute in float64 inside and cast the results back to q's dtype.

Correct: more accurate than needed; the outputs keep the input dtype.
"""


def softmax(x, dim=-1):
    x64 = x.double()
    m = x64.amax(dim=dim, keepdim=True)
    m = m.masked_fill(torch.isneginf(m), 0.0)
    e = torch.exp(x64 - m)
    s = e.sum(dim=dim, keepdim=True)
    return (e / s.clamp_min(torch.finfo(torch.float64).tiny)).to(x.dtype)


def scaled_dot_product_attention(q, k, v, mask=None):
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = q64 @ k64.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    w = softmax(scores, dim=-1)
    return (w @ v64).to(q.dtype), w.to(q.dtype)
