"""Assignment `seq2seq`: an encoder-decoder with attention on the copy task.

The task (Weeks 8 and 9 of the course): read a sequence of digits 0-9 and
write it back. The vocabulary has 12 symbols: the digits 0-9, ``BOS = 10``
(the "begin" token the decoder starts from) and one unused symbol, 11.

A plain encoder-decoder squeezes the whole input into the encoder's last
hidden state; its copy accuracy collapses as sequences grow (0.30 at length
16, 0.15 at length 32). With attention the decoder looks back at *all* the
encoder states at every step, and the same small network copies length 16
almost perfectly (0.995).

Shapes: B = batch, T = sequence length, h = hidden size, e = embedding size,
V = vocabulary size. Token tensors are ``torch.long``.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 12  # digits 0-9, BOS, one spare symbol
BOS = 10  # the decoder's first input token


def attend(query: torch.Tensor, enc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Dot-product attention of one decoder state over the encoder states.

    query: (B, h), the decoder's state: "what am I looking for?"
    enc:   (B, T, h), the encoder states, used as the keys AND the values.
    Returns ``(context (B, h), weights (B, T))`` with
    ``weights = softmax(enc · query / sqrt(h))`` over the T positions (each
    row is non-negative and sums to 1) and ``context = Σ_t weights[:, t] enc[:, t]``,
    the weighted average of the encoder states.
    """
    # TODO(attend): replace this line with your implementation.
    raise NotImplementedError("attend is not implemented yet")


class AttnSeq2Seq(nn.Module):
    """GRU encoder, GRU-cell decoder that attends to every encoder state.

    The layers are given (the grader loads its own weights into them, so keep
    their names and sizes): ``emb`` embeds tokens, ``encoder`` reads the
    source, ``cell`` advances the decoder one step from [embedded token,
    context], ``out`` maps [decoder state, context] to logits.
    """

    def __init__(self, hidden: int = 32, vocab: int = VOCAB, emb: int = 32) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.cell = nn.GRUCell(emb + hidden, hidden)
        self.out = nn.Linear(2 * hidden, vocab)

    def step(self, tok: torch.Tensor, state: torch.Tensor, enc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoder step.

        tok: (B,) long, the previous output token (or BOS); state: (B, h); enc: (B, T, h).
        1. context from the OLD state: ``c = attend(state, enc)[0]``;
           new state ``state = cell(cat[emb(tok), c], state)``.
        2. context from the NEW state: ``c' = attend(state, enc)[0]``;
           ``logits = out(cat[state, c'])``.
        Returns ``(logits (B, V), new state (B, h))``.
        """
        # TODO(AttnSeq2Seq.step): replace this line with your implementation.
        raise NotImplementedError("AttnSeq2Seq.step is not implemented yet")

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: the decoder reads the TRUE previous tokens.

        src: (B, T_src) long; tgt_in: (B, T) long, BOS followed by the target
        shifted right by one. Run the encoder over ``emb(src)``, start the
        decoder from the encoder's last hidden state and call ``step`` once per
        position of ``tgt_in``. Returns logits (B, T, V).
        """
        # TODO(AttnSeq2Seq.forward): replace this line with your implementation.
        raise NotImplementedError("AttnSeq2Seq.forward is not implemented yet")

    @torch.no_grad()
    def generate(self, src: torch.Tensor, length: int) -> torch.Tensor:
        """Free running (greedy): the decoder reads its OWN previous prediction.

        src: (B, T_src) long. Start from BOS and the encoder's last hidden
        state; at each step feed back the argmax of the logits. Returns the
        ``length`` predicted tokens, (B, length) long (BOS not included).
        """
        # TODO(AttnSeq2Seq.generate): replace this line with your implementation.
        raise NotImplementedError("AttnSeq2Seq.generate is not implemented yet")


def copy_batch(batch_size: int, length: int, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of the copy task: ``(src, tgt_in)``, both (batch_size, length) long.

    ``src = torch.randint(0, 10, (batch_size, length), generator=generator)``:
    exactly this one draw, so that the same generator gives the same batches
    as the grader's. The target is ``src`` itself; the decoder's input
    ``tgt_in`` is BOS followed by ``src[:, :-1]`` (the target shifted right).
    """
    # TODO(copy_batch): replace this line with your implementation.
    raise NotImplementedError("copy_batch is not implemented yet")


def train_copy(
    model: nn.Module,
    length: int,
    steps: int = 2500,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on the copy task with teacher forcing; return the loss of every step.

    Batches come from ``copy_batch(batch_size, length, generator)`` with one
    ``torch.Generator`` seeded by ``seed``. Each step: cross-entropy of
    ``model(src, tgt_in)`` against ``src`` (averaged over all B·T tokens),
    ``zero_grad``, ``backward``, gradient-norm clipping at 1.0
    (``nn.utils.clip_grad_norm_``), then a step of
    ``torch.optim.Adam(model.parameters(), lr=lr)``.
    Returns ``steps`` floats.
    """
    # TODO(train_copy): replace this line with your implementation.
    raise NotImplementedError("train_copy is not implemented yet")

