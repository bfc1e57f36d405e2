"""copy_batch makes a second random draw (a separate draw for the decoder input).

Your copy_batch draws more random numbers than the one torch.randint(0, 10, (batch_size,
length)) call: here it draws a fresh first token for each row. Every extra draw moves the
generator, so later batches no longer match; tgt_in is built from src, with no randomness.
"""
CAUGHT_BY = ["hidden/test_copy_batch.py::test_copy_batch_matches_reference"]
PATCH = [('src = torch.randint(0, 10, (batch_size, length), generator=generator)\n',
  'src = torch.randint(0, 10, (batch_size, length), generator=generator)\n'
  'torch.randint(0, 10, (batch_size, 1), generator=generator)  # an extra draw\n'),
 ('tgt_in = torch.cat([bos, src[:, :-1]], dim=1)\nreturn src, tgt_in\n',
  'return src, torch.cat([bos, src[:, :-1]], dim=1)\n')]
