"""train_copy scores the logits against tgt_in instead of src.

Your loss compares the predictions with the decoder's INPUT. The target is src, the digits to
copy; tgt_in (BOS, then src shifted right) is only what the decoder reads. Against tgt_in the
model learns to repeat the token it was just given, which is useless when running free.
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_train_copy_follows_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]
PATCH = [('model.train()\n', ''),
 ('loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), src.reshape(-1))\n',
  'loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_in.reshape(-1))  # wrong target\n')]
