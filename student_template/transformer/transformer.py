"""Assignment `transformer`: a pre-norm Transformer block, a tiny causal language
model, its next-token loss, a training loop with validation checkpointing, and
greedy generation.

The task is the course's modular counting: every sequence counts up by one
modulo 8 from a random start (``2 3 4 5 6 7 0 1 ...``). A model that has learnt
the rule predicts every next token except the first with near certainty; a
model that knows nothing pays the uniform baseline ``log 8 ≈ 2.079`` nats per
token.

Provided (not a TODO; use them as they are): ``MultiHeadAttention`` (PyTorch's
``nn.MultiheadAttention`` with the course's call and mask convention) and
``counting_data``.

Brought from your ``multihead`` assignment: ``sinusoidal_positions``. Paste your
own function (the one that passed the multihead tests) in place of its TODO; the
grader checks the whole model against the reference, so a wrong table costs points
in ``TinyCausalLM``'s tests. (Your instructor may ship it ready-made once the
multihead deadline has passed.)

Your part: ``TransformerBlock``, ``TinyCausalLM``, ``lm_loss``, ``train`` and
``generate`` (search for ``TODO``). Mask convention throughout: a boolean entry
``True`` means *blocked* (that query may not look at that key), as in
``nn.MultiheadAttention`` and ``nn.TransformerEncoderLayer``.

Do not use ``nn.TransformerEncoderLayer`` or ``nn.TransformerEncoder`` in
your code: the grader detects them when your code runs. The grader compares your block with ``nn.TransformerEncoderLayer``,
so you may of course use it in your own experiments.
"""

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

# ---------------------------------------------------------------------------
# From your multihead assignment: positional encodings
# ---------------------------------------------------------------------------


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """Float32 (n_positions, d_model) table of the original sinusoidal encodings.

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``; ``ValueError`` for an odd
    ``d_model``. The same contract as in the multihead assignment: paste your own.
    """
    # TODO(sinusoidal_positions): replace this line with your implementation.
    raise NotImplementedError("sinusoidal_positions is not implemented yet")


# ---------------------------------------------------------------------------
# Provided code: multi-head attention, the counting data
# ---------------------------------------------------------------------------


class MultiHeadAttention(nn.MultiheadAttention):
    """Multi-head attention: PyTorch's ``nn.MultiheadAttention`` called the course's way. Provided.

    Parameters are torch's own: ``in_proj_weight`` (3d, d) stacking W_Q, W_K, W_V,
    ``in_proj_bias`` (3d,) and ``out_proj`` (``nn.Linear(d, d)``).
    ``forward(query, key, value, mask=None)``: query (B, n_q, d), key/value (B, n_k, d);
    mask None or bool (n_q, n_k), True = blocked. Returns ``(out (B, n_q, d),
    weights (B, h, n_q, n_k))``, the weights of every head. A causal mask always
    leaves each query its own position; a query with *every* key blocked is
    outside this class's contract (torch returns NaN there). Your multihead
    ``MultiHeadAttention`` computes the same thing and may replace this class.
    """

    def __init__(self, d_model: int, n_heads: int):
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        super().__init__(d_model, n_heads, batch_first=True)

    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, attn_mask=mask, need_weights=True, average_attn_weights=False)


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
    ``self.max_len``. The positional table is fixed (sinusoidal), never a parameter: compute it
    on the fly or keep it as a buffer (``register_buffer``, persistent or not), of shape
    (max_len, d_model), (1, max_len, d_model) or (max_len, 1, d_model).

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
