"""train_copy seeds a new generator every step, so every batch is the same.

Your loop creates torch.Generator().manual_seed(seed) inside the loop: each step starts the
random stream afresh and trains on the identical batch, so the model memorises 64 sequences
instead of learning to copy. Create the generator once, before the loop.
"""
CAUGHT_BY = ["hidden/test_train.py::test_train_copy_follows_reference"]
PATCH = [('generator = torch.Generator().manual_seed(seed)\n'
  'optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n',
  'optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n'),
 ('for _ in range(steps):\nsrc, tgt_in = copy_batch(batch_size, length, generator)\n',
  'for _ in range(steps):\n'
  '    generator = torch.Generator().manual_seed(seed)  # reseeded every step\n'
  '    src, tgt_in = copy_batch(batch_size, length, generator)\n')]
