"""copy_batch draws from the global random generator, ignoring its generator argument.

Your batches do not depend on the generator you were given, so two runs with the same seed see
different data and a result cannot be reproduced. Pass it on:
torch.randint(0, 10, (batch_size, length), generator=generator).
"""
CAUGHT_BY = [
    "hidden/test_copy_batch.py::test_copy_batch_matches_reference",
    "hidden/test_train.py::test_train_copy_follows_reference",
]
PATCH = [('src = torch.randint(0, 10, (batch_size, length), generator=generator)\n',
  'src = torch.randint(0, 10, (batch_size, length))  # generator ignored\n'),
 ('tgt_in = torch.cat([bos, src[:, :-1]], dim=1)\nreturn src, tgt_in\n',
  'return src, torch.cat([bos, src[:, :-1]], dim=1)\n')]
