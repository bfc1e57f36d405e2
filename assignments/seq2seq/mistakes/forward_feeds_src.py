"""forward feeds src to the decoder instead of tgt_in (unshifted decoder input).

Your decoder reads src[:, t] while predicting src[:, t]: it sees the answer, so training is
trivial and free running fails. Teacher forcing feeds the TRUE PREVIOUS token: tgt_in is BOS
followed by src[:, :-1], and step t reads tgt_in[:, t].
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_forward_matches_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]
PATCH = [('state = last[0]\noutputs = []\n', 'state, outputs = last[0], []\n'),
 ('logits, state = self.step(tgt_in[:, t], state, enc)\n',
  'logits, state = self.step(src[:, t], state, enc)  # should be tgt_in[:, t]\n')]
