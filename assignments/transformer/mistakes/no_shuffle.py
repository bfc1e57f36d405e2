"""The training rows are never shuffled: every epoch takes the batches in the same fixed order.

Your loop walks the rows in their stored order (torch.arange, or slicing train_tokens[i:i + batch_size]), so
every epoch sees the same batches in the same order and the seed argument changes nothing. Shuffle at the start
of every epoch with order = torch.randperm(n_rows, generator=generator), where
generator = torch.Generator().manual_seed(seed) is created once before the epoch loop.
"""

CAUGHT_BY = ["hidden/test_shuffle.py::test_shuffle_each_epoch_from_the_seeded_generator"]
PATCH = [
    ("generator = torch.Generator().manual_seed(seed)\n", ""),
    (
        "for rows in torch.randperm(n_rows, generator=generator).split(batch_size):\n",
        "for rows in torch.arange(n_rows).split(batch_size):\n",
    ),
]
