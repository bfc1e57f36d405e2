"""The shuffle uses the global random generator instead of a generator seeded with `seed`.

torch.randperm(n) without a generator draws from the global RNG, so the order (and the whole
history) depends on everything that ran before; the seed argument does nothing. Create
generator = torch.Generator().manual_seed(seed) once and call torch.randperm(n, generator=generator).
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_same_seed_same_history",
    "hidden/test_shuffle.py::test_shuffle_each_epoch_from_the_seeded_generator",
]
PATCH = [('generator = torch.Generator().manual_seed(seed)\n', ''),
 ('for rows in torch.randperm(n_rows, generator=generator).split(batch_size):\n',
  'for rows in torch.randperm(n_rows).split(batch_size):\n')]
