"""CS224N assignment 4's NMT model: step() with e_t = bmm(enc, dec_hidden.unsqueeze(2)).squeeze(2), alpha_t = softmax(e_t, 1), a_t = alpha_t.unsqueeze(1).bmm(enc).squeeze(1), U_t = cat(dec_hidden, a_t); input feeding Ybar_t = cat(Y_t, o_prev); decode() over torch.split of the target; the loss as gathered log-probabilities of the gold words; run.py's train loop

Source: the Stanford CS224N (Winter 2019-2021) assignment 4 "Neural Machine Translation"
starter code, a4/nmt_model.py, class ``NMT`` (``forward``: log_softmax of the vocabulary
projection and ``torch.gather`` of the gold words' log-probabilities summed per sentence;
``decode``; ``step``) and a4/run.py, function ``train`` (``optimizer.zero_grad()``, the loss
``-model(src, tgt)`` summed and divided by the batch size, ``backward``,
``clip_grad_norm_``, ``optimizer.step()``, Adam), as completed in public solution
repositories, e.g. ZubinGou/CS224n-Assignment, a4/nmt_model.py (no licence stated). Written
after its formulation, not copied (the search tools' terms keep public code out of this
repository's commits).
Changes for the contract: the encoder is the contract's unidirectional GRU (CS224N: a
bidirectional LSTM whose final states are concatenated and projected by h_projection /
c_projection), so the decoder starts from the encoder's last hidden state, batch-first, with no
pack/pad of sequences (no padding on the copy task) and no enc_masks; there is no
att_projection: the keys are the encoder states themselves, and e_t is divided by sqrt(h)
(the contract's scaled dot product); the decoder cell is the contract's GRUCell (CS224N: an
LSTMCell with a (hidden, cell) state); CS224N's input feeding concatenates Y_t with o_prev, the
previous step's combined output: here o_prev is the attention output of the previous state,
recomputed at the start of ``step`` from the state it is given (the contract's "context from
the OLD state", which equals the previous step's a_t); the combined output projection, tanh and
dropout are dropped and the contract's ``out`` reads U_t = cat(dec_hidden, a_t) directly; the
loop splits the batch-first tokens along dim 1 (CS224N splits time-major embeddings along dim
0) and the target is not chopped (tgt_in is already the shifted input); F.softmax over dim 1
stays (the seq2seq assignment allows PyTorch's softmax); the loss is the gathered
log-probabilities' negative sum divided by the number of tokens B·T (the contract's mean;
CS224N divides by the batch size), clipped at 1.0 (CS224N's --clip-grad is 5.0), batches from
copy_batch with one seeded generator, the step losses returned; no validation, decay or
patience. generate (CS224N has only beam search) and copy_batch come from the reference.
"""
BUG = ("index=src.unsqueeze(-1)", "index=tgt_in.unsqueeze(-1)")  # gold words = the decoder's own input
BUG_NAMES = ["train_target_is_tgt_in"]


def attend(query, enc):
    e_t = torch.bmm(enc, query.unsqueeze(2)).squeeze(dim=2) / math.sqrt(enc.size(2))  # noqa: F821 - (b, src_len)
    alpha_t = F.softmax(e_t, 1)  # noqa: F821
    a_t = alpha_t.unsqueeze(1).bmm(enc).squeeze(1)  # (b, h)
    return a_t, alpha_t


class AttnSeq2Seq(AttnSeq2Seq):  # noqa: F821
    def step(self, tok, state, enc):
        o_prev, _ = attend(state, enc)  # input feeding: the previous step's attention output
        Ybar_t = torch.cat((self.emb(tok), o_prev), 1)  # noqa: F821
        dec_hidden = self.cell(Ybar_t, state)
        a_t, _ = attend(dec_hidden, enc)
        U_t = torch.cat((dec_hidden, a_t), 1)  # noqa: F821
        return self.out(U_t), dec_hidden

    def forward(self, src, tgt_in):
        enc_hiddens, last_hidden = self.encoder(self.emb(src))
        dec_state = last_hidden[0]
        combined_outputs = []
        for Y_t in torch.split(tgt_in, 1, dim=1):  # noqa: F821
            Y_t = torch.squeeze(Y_t, 1)  # noqa: F821 - (b,)
            o_t, dec_state = self.step(Y_t, dec_state, enc_hiddens)
            combined_outputs.append(o_t)
        return torch.stack(combined_outputs, dim=1)  # noqa: F821


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # noqa: F821
    model.train()
    losses = []
    for _ in range(steps):
        src, tgt_in = copy_batch(batch_size, length, generator)  # noqa: F821
        optimizer.zero_grad()
        P = F.log_softmax(model(src, tgt_in), dim=-1)  # noqa: F821 - (b, T, V)
        target_gold_words_log_prob = torch.gather(P, index=src.unsqueeze(-1), dim=-1).squeeze(-1)  # noqa: F821
        example_losses = -target_gold_words_log_prob.sum(dim=1)  # (b,) per sentence
        loss = example_losses.sum() / (batch_size * length)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: F821
        optimizer.step()
        losses.append(loss.item())
    return losses
