"""The decoder starts from a zero state instead of the encoder's last hidden state.

Your decoder's initial state is zeros. In the encoder-decoder the encoder's last hidden state
(the second output of nn.GRU, last[0]) is the summary of the input that starts the decoder;
attention adds a look at every encoder state, it does not replace that start.
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_forward_matches_reference",
    "hidden/test_model.py::test_generate_matches_reference",
]
PATCH = [('enc, last = self.encoder(self.emb(src))\nstate = last[0]\noutputs = []\n',
  'enc, _ = self.encoder(self.emb(src))\n'
  'state = torch.zeros(src.shape[0], enc.shape[-1], dtype=enc.dtype)  # should be last[0]\n'
  'outputs = []\n'),
 ('enc, last = self.encoder(self.emb(src))\n'
  'state = last[0]\n'
  'tok = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)\n',
  'enc, _ = self.encoder(self.emb(src))\n'
  'state = torch.zeros(src.shape[0], enc.shape[-1], dtype=enc.dtype)\n'
  'tok = torch.full((src.shape[0],), BOS, dtype=torch.long)\n')]
