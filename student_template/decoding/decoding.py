"""Assignment `decoding`: temperature, top-k and nucleus sampling, and a key/value
cache whose generation equals recomputation.

The model is given as plain tensors (a dict of float64 parameters, see
``init_params``): an *attention-only* causal language model, a Transformer
with the feed-forward networks and the norms taken out, so that what the
cache changes stands alone. Per layer l, on x (B, T, d)::

    q, k, v = x @ W_q[l], x @ W_k[l], x @ W_v[l]          # (B, T, d) each
    x = x + one_head_attention(q, k, v, mask)[0] @ W_o[l]               # one head, residual
    logits = x @ head                                       # after the last layer

with ``x = embedding[tokens] + positions[t0 : t0 + T]`` (a learned position
table; t0 is the position of the first token fed, 0 without a cache).

Provided (not a TODO; use them as they are): ``one_head_attention`` and ``init_params``.
Every attention in your code goes through ``one_head_attention``. The grader checks that a
cached step reads the past from the cache (it hands your ``forward`` a cache holding keys
and values no recomputation gives, and runs your ``generate`` with a cache whose ``update``
marks what it stores). Your part (search for ``TODO``): ``next_token_probs``, ``sample_next``,
``causal_mask``, ``KVCache``, ``forward`` and ``generate``. Mask convention:
``True`` means *blocked* (that query may not look at that key).
"""

import math

import torch

# ---------------------------------------------------------------------------
# Provided code: single-head attention and the model's parameters
# ---------------------------------------------------------------------------


def one_head_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor = None):
    """Single-head scaled dot-product attention. Provided: call it for every attention.

    q (B, n_q, d), k and v (B, n_k, d); mask None or bool broadcastable to
    (B, n_q, n_k), True = blocked. Returns ``(out (B, n_q, d), weights (B, n_q, n_k))``.
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])                 # (B, n_q, n_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))                       # blocked keys: -inf
    weights = torch.softmax(scores, dim=-1)                                    # (B, n_q, n_k)
    return weights @ v, weights                                                # (B, n_q, d), (B, n_q, n_k)


def init_params(vocab_size: int = 10, d_model: int = 16, n_layers: int = 2, max_len: int = 32, seed: int = 0) -> dict:
    """Random float64 parameters of the attention-only LM. Provided.

    Keys: ``embedding`` (V, d), ``positions`` (max_len, d), ``layers.{l}.w_q``,
    ``layers.{l}.w_k``, ``layers.{l}.w_v``, ``layers.{l}.w_o`` (d, d) for l in
    range(n_layers), ``head`` (d, V). The number of layers is the number of
    ``w_q`` keys; ``max_len`` is ``positions.shape[0]``.
    """
    g = torch.Generator().manual_seed(seed)
    f64 = torch.float64
    params = {
        "embedding": torch.randn(vocab_size, d_model, generator=g, dtype=f64),
        "positions": 0.5 * torch.randn(max_len, d_model, generator=g, dtype=f64),
    }
    for layer in range(n_layers):
        for name in ("w_q", "w_k", "w_v", "w_o"):
            params[f"layers.{layer}.{name}"] = torch.randn(d_model, d_model, generator=g, dtype=f64) / math.sqrt(d_model)
    params["head"] = torch.randn(d_model, vocab_size, generator=g, dtype=f64)
    return params


def n_layers_of(params: dict) -> int:
    """The number of layers in ``params``. Provided."""
    return sum(1 for name in params if name.endswith(".w_q"))


# ---------------------------------------------------------------------------
# Your part 1: the next-token distribution and drawing from it
# ---------------------------------------------------------------------------


def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int = None, top_p: float = None) -> torch.Tensor:
    """The distribution ``sample_next`` draws from: logits (B, V) -> probabilities (B, V).

    In this order: temperature, then top-k, then top-p, each on the result of the previous.

    * temperature T > 0: ``softmax(logits / T)``. T = 0 is greedy: probability 1 on
      the argmax of each row, the first of tied maxima (as ``torch.argmax``), for any
      finite logits, whatever top_k and top_p are (a tiny temperature is not greedy).
      ``ValueError`` if T < 0.
    * top_k (int >= 1, or None): keep the k most probable tokens of each row, exactly
      k (which of tied tokens is unspecified), renormalised; k >= V keeps them all.
      ``ValueError`` if top_k < 1.
    * top_p (0 < p <= 1, or None): the nucleus. Sort the (filtered) probabilities in
      decreasing order and keep the smallest prefix whose total reaches p: a token is
      kept when the total of the tokens *before* it is below p (strictly: a token whose
      preceding total equals p exactly is dropped), so the token that crosses the
      threshold is kept. Which of tied tokens come first is unspecified. Renormalised.
      ``ValueError`` outside (0, 1].

    Returns float probabilities in logits' dtype: rows sum to 1, dropped tokens are exactly 0.
    """
    # TODO(next_token_probs): replace this line with your implementation.
    raise NotImplementedError("next_token_probs is not implemented yet")


def sample_next(logits: torch.Tensor, temperature: float = 1.0, top_k: int = None, top_p: float = None,
                generator: torch.Generator = None) -> torch.Tensor:
    """Draw one next token per row: logits (B, V) -> long (B,).

    Draws from ``next_token_probs(logits, temperature, top_k, top_p)``, each row
    independently, with random numbers taken *only* from ``generator`` (the global
    random generator when it is None), so the same seed gives the same tokens
    whatever else used the global generator. A dropped token is never drawn.
    Temperature 0 returns the argmax of each row (the first of tied maxima), without drawing.
    """
    # TODO(sample_next): replace this line with your implementation.
    raise NotImplementedError("sample_next is not implemented yet")


# ---------------------------------------------------------------------------
# Your part 2: the causal mask against a cache, the cache, the model
# ---------------------------------------------------------------------------


def causal_mask(n_q: int, n_k: int) -> torch.Tensor:
    """Bool (n_q, n_k), True = blocked, for the *last* n_q of n_k positions as queries.

    Query i sits at position ``n_k - n_q + i`` (the keys before it are the cache);
    it may see keys 0 .. n_k - n_q + i and no later one. ``causal_mask(n, n)`` is
    the usual mask (True strictly above the diagonal); ``causal_mask(1, n)`` blocks
    nothing. ``ValueError`` if n_q > n_k.
    """
    # TODO(causal_mask): replace this line with your implementation.
    raise NotImplementedError("causal_mask is not implemented yet")


class KVCache:
    """The keys and values of every position processed so far, per layer.

    ``KVCache(n_layers, max_len)``. Attributes: ``max_len``; ``keys`` and ``values``,
    lists with one entry per layer: None before the layer's first update, then a
    (B, t, d) tensor. ``len(cache)`` is the number of positions stored in layer 0
    (layer 0's t; 0 while layer 0 is empty), at any moment: inside a ``forward`` step
    layer 0 is updated first and ``len`` counts its new positions at once, while the
    other layers catch up. Between two ``forward`` calls every layer holds the same number.

    ``update(layer, k, v)``: k and v (B, n, d), the new positions' keys and values.
    Appends them after the stored ones (never changing those) and returns the
    layer's keys and values including the new ones, ``(K, V)``, each (B, t + n, d).
    Later updates never change a (K, V) returned earlier (no in-place shifting).
    ``ValueError`` (saying max_len) if t + n > max_len, before storing anything.
    """

    def __init__(self, n_layers: int, max_len: int):
        # TODO(KVCache.__init__): replace this line with your implementation.
        raise NotImplementedError("KVCache.__init__ is not implemented yet")

    def __len__(self) -> int:
        # TODO(KVCache.__len__): replace this line with your implementation.
        raise NotImplementedError("KVCache.__len__ is not implemented yet")

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        # TODO(KVCache.update): replace this line with your implementation.
        raise NotImplementedError("KVCache.update is not implemented yet")


def forward(params: dict, tokens: torch.Tensor, cache: KVCache = None) -> torch.Tensor:
    """The attention-only LM: tokens (B, T) long -> logits (B, T, V) in the parameters' dtype.

    Without a cache: the tokens are positions 0 .. T-1, causal mask ``causal_mask(T, T)``.
    With a cache holding t0 = ``len(cache)`` positions: the tokens are positions
    t0 .. t0+T-1; in each layer their keys and values go through
    ``cache.update(layer, k, v)`` and the queries attend to everything it returns,
    with ``causal_mask(T, t0 + T)``. Calls ``one_head_attention`` once per layer.
    ``ValueError`` if the positions would pass max_len (``positions.shape[0]``).
    """
    # TODO(forward): replace this line with your implementation.
    raise NotImplementedError("forward is not implemented yet")


def generate(params: dict, prompt: torch.Tensor, n_new: int, temperature: float = 1.0, top_k: int = None,
             top_p: float = None, generator: torch.Generator = None, use_cache: bool = True):
    """Generate ``n_new`` tokens after ``prompt`` (B, T0) long.

    Returns ``(tokens, logits)``: tokens (B, T0 + n_new) long (the prompt, then the new
    tokens) and logits (B, n_new, V), the logits each new token was drawn from (the last
    position's, before temperature). Each new token is
    ``sample_next(logits, temperature, top_k, top_p, generator)``.

    ``use_cache=True``: a fresh ``KVCache`` per call (nothing kept from an earlier call,
    even one with the same params object); the prompt is fed once, then each step feeds
    only the token just drawn (its attention computes (B, 1, t) weights).
    ``use_cache=False``: each step recomputes the whole sequence so far with
    ``forward(params, tokens)``. Both give the same tokens and logits (to round-off).
    ``ValueError`` if T0 + n_new > max_len, before any work.
    """
    # TODO(generate): replace this line with your implementation.
    raise NotImplementedError("generate is not implemented yet")
