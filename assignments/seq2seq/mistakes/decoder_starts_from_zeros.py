"""The decoder starts from a zero state instead of the encoder's last hidden state.

Your decoder's initial state is zeros. In the encoder-decoder the encoder's last hidden state
(the second output of nn.GRU, last[0]) is the summary of the input that starts the decoder;
attention adds a look at every encoder state, it does not replace that start.
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_forward_matches_reference",
    "hidden/test_model.py::test_generate_matches_reference",
]


def _forward(self, src, tgt_in):
    enc, _ = self.encoder(self.emb(src))
    state = torch.zeros(src.shape[0], enc.shape[-1], dtype=enc.dtype)  # should be last[0]
    outputs = []
    for t in range(tgt_in.shape[1]):
        logits, state = self.step(tgt_in[:, t], state, enc)
        outputs.append(logits)
    return torch.stack(outputs, dim=1)


@torch.no_grad()
def _generate(self, src, length):
    enc, _ = self.encoder(self.emb(src))
    state = torch.zeros(src.shape[0], enc.shape[-1], dtype=enc.dtype)
    tok = torch.full((src.shape[0],), BOS, dtype=torch.long)
    tokens = []
    for _ in range(length):
        logits, state = self.step(tok, state, enc)
        tok = logits.argmax(dim=-1)
        tokens.append(tok)
    return torch.stack(tokens, dim=1)


AttnSeq2Seq.forward = _forward
AttnSeq2Seq.generate = _generate
