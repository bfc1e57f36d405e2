"""Assignment `transformer`: a pre-norm Transformer block, a tiny causal language
model, its next-token loss, a training loop with validation checkpointing, and
greedy generation.

The task is the course's modular counting: every sequence counts up by one
modulo 8 from a random start (``2 3 4 5 6 7 0 1 ...``). A model that has learnt
the rule predicts every next token except the first with near certainty; a
model that knows nothing pays the uniform baseline ``log 8 ≈ 2.079`` nats per
token.

Provided (not a TODO; use them as they are): ``sinusoidal_positions``,
``MultiHeadAttention`` and ``counting_data``. They work, so a bug in an earlier
assignment cannot cost you points here.

Your part: ``TransformerBlock``, ``TinyCausalLM``, ``lm_loss``, ``train`` and
``generate`` (search for ``TODO``). Mask convention throughout: a boolean entry
``True`` means *blocked* (that query may not look at that key), as in
``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer``.

Do not use ``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder`` or
``nn.MultiheadAttention`` in your code: the grader detects them when your
code runs. The grader compares your block with ``nn.TransformerEncoderLayer``,
so you may of course use it in your own experiments.
"""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

# ---------------------------------------------------------------------------
# Provided code: positional encodings, multi-head attention, the counting data
# ---------------------------------------------------------------------------


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """Float32 (n_positions, d_model) table of the original sinusoidal encodings.

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``. Provided.
    """
    if d_model % 2:
        raise ValueError(f"sinusoidal positions need an even d_model, got {d_model}")
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]               # (P, 1)
    freq = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d/2,)
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)             # (P, d)
    table[:, 0::2] = torch.sin(pos * freq)                                     # (P, d/2) even features
    table[:, 1::2] = torch.cos(pos * freq)                                     # (P, d/2) odd features
    return table.float()                                                       # (P, d)


class MultiHeadAttention(nn.Module):
    """Multi-head self/cross-attention with ``nn.MultiheadAttention``'s parameter names. Provided.

    Parameters: ``in_proj_weight`` (3d, d) stacking W_Q, W_K, W_V; ``in_proj_bias`` (3d,);
    ``out_proj`` (``nn.Linear(d, d)``), so ``load_state_dict`` from a torch module works.
    ``forward(query, key, value, mask=None)``: query (B, n_q, d), key/value (B, n_k, d);
    mask None or bool (n_q, n_k), True = blocked. Returns ``(out (B, n_q, d),
    weights (B, h, n_q, n_k))``. A query whose keys are all blocked gets zero
    weights (its output row is ``out_proj.bias``) instead of NaN.
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model, self.n_heads = d_model, n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))
        self.out_proj = nn.Linear(d_model, d_model)
        nn.init.xavier_uniform_(self.in_proj_weight)                            # the initialisation torch uses
        nn.init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, mask=None):
        B, n_q, d = query.shape
        n_k, h = key.shape[1], self.n_heads
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)                            # 3 x (d, d)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3)                              # 3 x (d,)
        q = F.linear(query, w_q, b_q).view(B, n_q, h, d // h).transpose(1, 2)   # (B, h, n_q, d_h)
        k = F.linear(key, w_k, b_k).view(B, n_k, h, d // h).transpose(1, 2)     # (B, h, n_k, d_h)
        v = F.linear(value, w_v, b_v).view(B, n_k, h, d // h).transpose(1, 2)   # (B, h, n_k, d_h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // h)                    # (B, h, n_q, n_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))                    # blocked keys: -inf
        top = scores.amax(dim=-1, keepdim=True)                                 # (B, h, n_q, 1)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))      # all-blocked row: shift by 0
        e = torch.exp(scores - top)                                             # (B, h, n_q, n_k), 0 where blocked
        total = e.sum(dim=-1, keepdim=True)                                     # (B, h, n_q, 1)
        weights = e / torch.where(total > 0, total, torch.ones_like(total))     # (B, h, n_q, n_k)
        heads = weights @ v                                                     # (B, h, n_q, d_h)
        merged = heads.transpose(1, 2).reshape(B, n_q, d)                       # (B, n_q, d)
        return self.out_proj(merged), weights                                   # (B, n_q, d), (B, h, n_q, n_k)


def counting_data(n: int, generator: torch.Generator = None, vocab_size: int = 8, length: int = 12) -> torch.Tensor:
    """The course's modular-counting task: long (n, length + 1). Provided.

    Row i is ``(s_i + 0, s_i + 1, ..., s_i + length) mod vocab_size`` for a
    random start ``s_i``: ``length + 1`` tokens, so the model reads ``length``
    inputs and predicts ``length`` shifted targets.
    """
    starts = torch.randint(vocab_size, (n, 1), generator=generator)             # (n, 1)
    return (starts + torch.arange(length + 1)) % vocab_size                      # (n, length + 1)


# ---------------------------------------------------------------------------
# Your part
# ---------------------------------------------------------------------------


class TransformerBlock(nn.Module):
    """One pre-norm Transformer block (the GPT-2 ordering), no dropout.

    ``x = x + self_attn(norm1(x))`` then ``x = x + linear2(relu(linear1(norm2(x))))``.
    Sub-modules, named exactly as ``nn.TransformerEncoderLayer(d_model, n_heads, d_ff,
    dropout=0.0, batch_first=True, norm_first=True)`` names them so its weights load:
    ``self_attn`` (the provided ``MultiHeadAttention``), ``linear1`` (d_model -> d_ff),
    ``linear2`` (d_ff -> d_model), ``norm1`` and ``norm2`` (``nn.LayerNorm(d_model)``).

    forward(x (B, T, d_model), mask None or bool (T, T), True = blocked) -> (B, T, d_model).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        # TODO(TransformerBlock.__init__): replace this line with your implementation.
        raise NotImplementedError("TransformerBlock.__init__ is not implemented yet")

    def forward(self, x: torch.Tensor, mask: torch.Tensor = None) -> torch.Tensor:
        # TODO(TransformerBlock.forward): replace this line with your implementation.
        raise NotImplementedError("TransformerBlock.forward is not implemented yet")


class TinyCausalLM(nn.Module):
    """A decoder-only language model: embedding, causal pre-norm blocks, final norm, head.

    Modules: ``embedding`` (``nn.Embedding(vocab_size, d_model)``), ``blocks``
    (``nn.ModuleList`` of ``n_layers`` independent ``TransformerBlock``s), ``norm``
    (``nn.LayerNorm(d_model)``), ``head`` (``nn.Linear(d_model, vocab_size)``). Keep
    ``self.max_len``. The positional table is not a parameter and must not appear in
    ``state_dict()`` (compute it on the fly or register it with ``persistent=False``).

    forward(tokens (B, T) long) -> logits (B, T, vocab_size):
    ``x = embedding(tokens) * sqrt(d_model) + PE[:T]``, every block with the causal
    mask (True strictly above the diagonal), then ``norm``, then ``head``.
    Raises ``ValueError`` if T > max_len.
    """

    def __init__(self, vocab_size: int, d_model: int = 32, n_heads: int = 4, d_ff: int = 64,
                 n_layers: int = 2, max_len: int = 64):
        super().__init__()
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.max_len = max_len
        # TODO(TinyCausalLM.__init__): replace this line with your implementation.
        raise NotImplementedError("TinyCausalLM.__init__ is not implemented yet")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        # TODO(TinyCausalLM.forward): replace this line with your implementation.
        raise NotImplementedError("TinyCausalLM.forward is not implemented yet")


def lm_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token loss: mean cross-entropy of ``model(tokens[:, :-1])`` against ``tokens[:, 1:]``.

    tokens: (B, T + 1) long. Returns a scalar tensor (differentiable). Works for any
    model mapping (B, T) tokens to (B, T, vocab) logits.
    """
    # TODO(lm_loss): replace this line with your implementation.
    raise NotImplementedError("lm_loss is not implemented yet")


def train(model: nn.Module, train_tokens: torch.Tensor, val_tokens: torch.Tensor, epochs: int = 25,
          lr: float = 3e-3, batch_size: int = 64, seed: int = 0) -> dict:
    """Train ``model`` with AdamW on next-token loss; keep the best validation checkpoint.

    train_tokens: (N, T + 1) long, val_tokens: (M, T + 1) long.
    Each epoch: shuffle the rows with a ``torch.Generator`` seeded once with ``seed``;
    for each batch of ``batch_size`` rows: zero the gradients, ``lm_loss``, backward,
    clip the gradient norm at 1.0, step ``torch.optim.AdamW(model.parameters(), lr=lr)``.
    Then the validation loss in eval mode without gradients.

    Returns ``{"train_loss": [float per epoch], "val_loss": [float per epoch],
    "best_epoch": int}``: ``train_loss`` is the mean loss over the epoch's rows (batch
    losses weighted by batch size), ``best_epoch`` the index of the lowest validation
    loss (the first on ties). On return ``model`` holds the weights of ``best_epoch``.
    """
    # TODO(train): replace this line with your implementation.
    raise NotImplementedError("train is not implemented yet")


def generate(model: nn.Module, prompt: torch.Tensor, n_new: int) -> torch.Tensor:
    """Greedy generation: prompt (B, T0) long -> (B, T0 + n_new) long.

    Each step feeds the last ``model.max_len`` tokens (the context window), takes
    the argmax of the logits at the *last* position and appends it. Runs the model
    in eval mode without gradients.
    """
    # TODO(generate): replace this line with your implementation.
    raise NotImplementedError("generate is not implemented yet")
