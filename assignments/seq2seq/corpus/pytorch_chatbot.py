"""The PyTorch chatbot tutorial's Luong 'dot' attention and GreedySearchDecoder: dot_score = torch.sum(hidden * encoder_output, dim=2) over time-major encoder outputs, .t(), F.softmax(dim=1).unsqueeze(1), context = weights.bmm(encoder_outputs.transpose(0, 1)); greedy decoding with torch.max(decoder_output, dim=1)

Source: pytorch/tutorials, beginner_source/chatbot_tutorial.py, classes ``Attn`` (method
'dot': ``dot_score`` and ``forward``), ``LuongAttnDecoderRNN`` (its context step) and
``GreedySearchDecoder`` (BSD-3-Clause licence). Written after its formulation, not copied
(the search tools' terms keep public code out of this repository's commits).
Changes for the contract: the encoder states arrive batch-first (B, T, h) and are transposed
to the tutorial's time-major (T, B, h) before the score, and the query (B, h) gets the
tutorial's leading length-1 axis; the 'dot' score is divided by sqrt(h) (the contract's scaled
dot product; the tutorial does not scale); the weights are returned squeezed to (B, T) and the
context to (B, h); no 'general' or 'concat' methods. GreedySearchDecoder decodes one sentence
(batch 1, tokens concatenated on a flat axis) and keeps the scores; here a batch, tokens stacked
to (B, length), no scores, the start token is BOS and the decoder step is the model's ``step``
(the contract's; the tutorial's LuongAttnDecoderRNN adds a tanh concat layer before ``out``),
and the first hidden state the encoder's last (the tutorial slices ``encoder_hidden[:n_layers]``).
step, forward, copy_batch and train_copy come from the reference.
"""
BUG = ("F.softmax(attn_energies, dim=1)", "F.softmax(attn_energies, dim=0)")  # normalised over the batch
BUG_NAMES = ["attend_softmax_over_batch"]


def attend(query, enc):
    hidden = query.unsqueeze(0)  # (1, B, h)
    encoder_outputs = enc.transpose(0, 1)  # (T, B, h), the tutorial's layout
    attn_energies = torch.sum(hidden * encoder_outputs, dim=2) / math.sqrt(enc.size(-1))  # noqa: F821 - (T, B)
    attn_energies = attn_energies.t()  # (B, T)
    attn_weights = F.softmax(attn_energies, dim=1).unsqueeze(1)  # noqa: F821 - (B, 1, T)
    context = attn_weights.bmm(encoder_outputs.transpose(0, 1))  # (B, 1, h)
    return context.squeeze(1), attn_weights.squeeze(1)


def _greedy_search(model, input_seq, max_length):
    encoder_outputs, encoder_hidden = model.encoder(model.emb(input_seq))
    decoder_hidden = encoder_hidden[0]
    decoder_input = torch.ones(input_seq.size(0), dtype=torch.long) * BOS  # noqa: F821
    all_tokens = []
    for _ in range(max_length):
        decoder_output, decoder_hidden = model.step(decoder_input, decoder_hidden, encoder_outputs)
        _, decoder_input = torch.max(decoder_output, dim=1)  # noqa: F821
        all_tokens.append(decoder_input)
    return torch.stack(all_tokens, dim=1)  # noqa: F821


@torch.no_grad()  # noqa: F821
def _generate(self, src, length):
    return _greedy_search(self, src, length)


AttnSeq2Seq.generate = _generate  # noqa: F821
