"""Dive into Deep Learning's attention seq2seq: DotProductAttention (torch.bmm of queries and keys.transpose(1, 2) / math.sqrt(d)), the decoder's loop over time-major embedded inputs with the last hidden state as the query, dec_input = cat([bos, Y[:, :-1]]), train_seq2seq with d2l's grad_clipping

Source: d2l-ai/d2l-en, d2l/torch.py: class ``DotProductAttention``, class
``Seq2SeqAttentionDecoder`` (``init_state``, ``forward``), function ``train_seq2seq`` and
function ``grad_clipping`` (code under MIT-0). Written after its formulation, not copied: the
search tools' terms keep public code out of this repository's commits, so each step below
follows the source's order and operations, in the kit's names.
Changes for the contract: DotProductAttention without valid_lens (a plain softmax over the keys,
no masked_softmax) and without dropout, the decoder state unsqueezed to one query (d2l's
``torch.unsqueeze(hidden_state[-1], dim=1)``) and the context squeezed back to (B, h), the
weights returned; d2l's decoder runs an nn.GRU on cat(context, x) with the attention scoring
the old state and its dense layer reading the GRU output only; the contract's step uses a
GRUCell on cat(emb(tok), context) (embedding first), then attends again from the new state and
feeds cat(state, context) to ``out``; d2l's ``init_state`` hands the encoder's outputs and last
hidden state to the decoder, kept here (batch-first, so no permute). train_seq2seq's optimiser
is already Adam; its MaskedSoftmaxCELoss summed per sequence (no padding here) becomes the
mean cross-entropy over all B·T tokens; batches come from copy_batch with one seeded
generator instead of a data iterator; d2l's Animator/Timer/Accumulator are dropped and the
step losses returned. grad_clipping is d2l's (no 1e-6, which the contract allows).
"""
BUG = ("/ math.sqrt(d)", "")  # unscaled dot products
BUG_NAMES = ["attend_no_scaling"]


def attend(query, enc):
    queries, keys, values = query.unsqueeze(1), enc, enc  # (B, 1, h), (B, T, h), (B, T, h)
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # noqa: F821
    attention_weights = F.softmax(scores, dim=-1)  # noqa: F821
    return torch.bmm(attention_weights, values).squeeze(1), attention_weights.squeeze(1)  # noqa: F821


class AttnSeq2Seq(nn.Module):  # noqa: F821
    def __init__(self, hidden=32, vocab=VOCAB, emb=32):  # noqa: F821
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)  # noqa: F821
        self.encoder = nn.GRU(emb, hidden, batch_first=True)  # noqa: F821
        self.cell = nn.GRUCell(emb + hidden, hidden)  # noqa: F821
        self.out = nn.Linear(2 * hidden, vocab)  # noqa: F821

    def init_state(self, src):
        outputs, hidden_state = self.encoder(self.emb(src))
        return outputs, hidden_state[-1]

    def step(self, tok, state, enc):
        context, _ = attend(state, enc)
        x = torch.cat((self.emb(tok), context), dim=-1)  # noqa: F821
        state = self.cell(x, state)
        context, _ = attend(state, enc)
        return self.out(torch.cat((state, context), dim=-1)), state  # noqa: F821

    def forward(self, src, tgt_in):
        enc_outputs, hidden_state = self.init_state(src)
        outputs = []
        for x in tgt_in.permute(1, 0):  # time-major, as d2l loops over X
            out, hidden_state = self.step(x, hidden_state, enc_outputs)
            outputs.append(out)
        return torch.stack(outputs, dim=1)  # noqa: F821

    @torch.no_grad()  # noqa: F821
    def generate(self, src, length):
        enc_outputs, hidden_state = self.init_state(src)
        dec_X = torch.full((src.shape[0],), BOS, dtype=torch.long)  # noqa: F821
        output_seq = []
        for _ in range(length):
            Y, hidden_state = self.step(dec_X, hidden_state, enc_outputs)
            dec_X = Y.argmax(dim=1)
            output_seq.append(dec_X)
        return torch.stack(output_seq, dim=1)  # noqa: F821


def copy_batch(batch_size, length, generator=None):
    Y = torch.randint(0, 10, (batch_size, length), generator=generator)  # noqa: F821
    bos = torch.tensor([BOS] * Y.shape[0]).reshape(-1, 1)  # noqa: F821
    dec_input = torch.cat([bos, Y[:, :-1]], 1)  # noqa: F821
    return Y, dec_input


def _grad_clipping(net, theta):
    params = [p for p in net.parameters() if p.requires_grad and p.grad is not None]
    norm = torch.sqrt(sum(torch.sum(p.grad**2) for p in params))  # noqa: F821
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # noqa: F821
    loss = nn.CrossEntropyLoss()  # noqa: F821
    model.train()
    losses = []
    for _ in range(steps):
        X, dec_input = copy_batch(batch_size, length, generator)
        optimizer.zero_grad()
        Y_hat = model(X, dec_input)
        l = loss(Y_hat.reshape(-1, Y_hat.shape[-1]), X.reshape(-1))  # noqa: E741
        l.backward()
        _grad_clipping(model, 1)
        optimizer.step()
        losses.append(float(l))
    return losses
