"""copy_batch returns tgt_in = src (the decoder input is not shifted).

Your tgt_in equals src, so at step t the decoder is given the very digit it must predict.
tgt_in is BOS followed by src[:, :-1]: shifted right by one, so that position t sees only the
digits before t.
"""
CAUGHT_BY = [
    "hidden/test_copy_batch.py::test_copy_batch_matches_reference",
    "hidden/test_train.py::test_train_copy_follows_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]
PATCH = [('bos = torch.full((batch_size, 1), BOS, dtype=torch.long)\n'
  'tgt_in = torch.cat([bos, src[:, :-1]], dim=1)\n'
  'return src, tgt_in\n',
  'return src, src.clone()\n')]
