"""copy_batch draws the digits as (length, batch_size) and transposes.

Your src has the right shape but not the same digits as torch.randint(0, 10, (batch_size,
length), generator=generator): a generator hands out numbers in order, so the shape of the draw
decides which sequence gets which digits. Draw in the (batch_size, length) shape directly.
"""
CAUGHT_BY = ["hidden/test_copy_batch.py::test_copy_batch_matches_reference"]
PATCH = [('src = torch.randint(0, 10, (batch_size, length), generator=generator)\n',
  'src = torch.randint(0, 10, (length, batch_size), generator=generator).T.contiguous()\n'),
 ('tgt_in = torch.cat([bos, src[:, :-1]], dim=1)\nreturn src, tgt_in\n',
  'return src, torch.cat([bos, src[:, :-1]], dim=1)\n')]
