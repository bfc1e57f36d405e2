"""The shuffle's generator is created (and seeded) anew every epoch: every epoch has the same order.

A torch.Generator().manual_seed(seed) made inside the epoch loop starts from the same state each epoch, so
torch.randperm draws the same permutation every time: the rows are shuffled once, not every epoch. Create the
generator once, before the epoch loop, and draw a fresh torch.randperm(n_rows, generator=generator) each epoch.
"""

CAUGHT_BY = ["hidden/test_shuffle.py::test_shuffle_each_epoch_from_the_seeded_generator"]
PATCH = [
    ("generator = torch.Generator().manual_seed(seed)\n", ""),
    (
        "for rows in torch.randperm(n_rows, generator=generator).split(batch_size):\n",
        "for rows in torch.randperm(n_rows, generator=torch.Generator().manual_seed(seed)).split(batch_size):\n",
    ),
]
