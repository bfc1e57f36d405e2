"""The PyTorch seq2seq translation tutorial's AttnDecoderRNN: one forward for teacher forcing and free running (decoder_input from SOS, decoder_hidden = encoder_hidden, the target as next input or topk(1) of the output), forward_step attending from the old hidden state and feeding cat((embedded, context)) to the GRU; its train_epoch

Source: pytorch/tutorials, intermediate_source/seq2seq_translation_tutorial.py, classes
``BahdanauAttention``, ``AttnDecoderRNN`` (``forward``, ``forward_step``) and function
``train_epoch`` (BSD-3-Clause licence). Written after its formulation, not copied (the search
tools' terms keep public code out of this repository's commits).
Changes for the contract: the tutorial's additive (Bahdanau) score Va(tanh(Wa(query) +
Ua(keys))) is replaced by the contract's scaled dot product, computed the tutorial's way
(scores of shape (B, 1, T), F.softmax over the last axis, context = torch.bmm(weights, keys));
the decoder uses an nn.GRUCell (the contract's ``cell``), so the hidden state is (B, h) and has
no permute; after the cell, the step attends again from the new state and ``out`` reads
cat(state, context) (the tutorial's ``out`` reads the GRU output only); no dropout; the decoder
length is the target's (forward) or ``length`` (generate) rather than MAX_LENGTH; teacher forcing
reads tgt_in[:, i] at step i (the tutorial feeds target_tensor[:, i] after step i, the same
sequence shifted by the SOS start); the outputs are logits (the tutorial returns log_softmax
for NLLLoss) and training uses cross-entropy of the logits, one Adam for the whole model instead
of one per encoder and decoder, batches from copy_batch, and the contract's gradient clipping
(the tutorial has none). copy_batch comes from the reference.
"""
BUG = ("decoder_hidden = encoder_hidden[0]", "decoder_hidden = torch.zeros_like(encoder_hidden[0])")  # noqa: E501
BUG_NAMES = ["decoder_starts_from_zeros"]


def attend(query, enc):
    keys = enc
    scores = torch.bmm(query.unsqueeze(1), keys.transpose(1, 2)) / math.sqrt(keys.size(-1))  # noqa: F821 - (B, 1, T)
    weights = F.softmax(scores, dim=-1)  # noqa: F821
    context = torch.bmm(weights, keys)  # noqa: F821 - (B, 1, h)
    return context.squeeze(1), weights.squeeze(1)


class AttnSeq2Seq(nn.Module):  # noqa: F821
    def __init__(self, hidden=32, vocab=VOCAB, emb=32):  # noqa: F821
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)  # noqa: F821
        self.encoder = nn.GRU(emb, hidden, batch_first=True)  # noqa: F821
        self.cell = nn.GRUCell(emb + hidden, hidden)  # noqa: F821
        self.out = nn.Linear(2 * hidden, vocab)  # noqa: F821

    def step(self, tok, state, enc):  # the tutorial's forward_step
        embedded = self.emb(tok)
        query = state
        context, attn_weights = attend(query, enc)
        input_gru = torch.cat((embedded, context), dim=1)  # noqa: F821
        state = self.cell(input_gru, state)
        context, _ = attend(state, enc)
        output = self.out(torch.cat((state, context), dim=1))  # noqa: F821
        return output, state

    def _decode(self, src, target_tensor=None, length=None):
        encoder_outputs, encoder_hidden = self.encoder(self.emb(src))
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, dtype=torch.long).fill_(BOS)  # noqa: F821
        decoder_hidden = encoder_hidden[0]
        decoder_outputs, tokens = [], []
        steps = target_tensor.size(1) if target_tensor is not None else length
        for i in range(steps):
            if target_tensor is not None:
                decoder_input = target_tensor[:, i]  # teacher forcing: feed the target as the input
            decoder_output, decoder_hidden = self.step(decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            if target_tensor is None:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # its own prediction as the next input
                tokens.append(decoder_input)
        if target_tensor is not None:
            return torch.stack(decoder_outputs, dim=1)  # noqa: F821
        return torch.stack(tokens, dim=1)  # noqa: F821

    def forward(self, src, tgt_in):
        return self._decode(src, target_tensor=tgt_in)

    @torch.no_grad()  # noqa: F821
    def generate(self, src, length):
        return self._decode(src, length=length)


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # noqa: F821
    criterion = nn.CrossEntropyLoss()  # noqa: F821
    model.train()
    losses = []
    for _ in range(steps):  # train_epoch, one batch per step
        input_tensor, decoder_in = copy_batch(batch_size, length, generator)  # noqa: F821
        target_tensor = input_tensor
        optimizer.zero_grad()
        decoder_outputs = model(input_tensor, decoder_in)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: F821
        optimizer.step()
        losses.append(loss.item())
    return losses
