"""The shuffle draws from the global RNG after torch.manual_seed(seed): the caller's random state is changed.

torch.manual_seed(seed) inside train makes the order reproducible, but it resets the global generator the
caller (and every later random call: initialisations, dropout, sampling) relies on, and each
torch.randperm(n) then draws from it. Leave the global state alone: create
generator = torch.Generator().manual_seed(seed) once and call torch.randperm(n_rows, generator=generator).
"""

CAUGHT_BY = ["hidden/test_shuffle.py::test_shuffle_each_epoch_from_the_seeded_generator"]
PATCH = [
    ("generator = torch.Generator().manual_seed(seed)\n", "torch.manual_seed(seed)\n"),
    (
        "for rows in torch.randperm(n_rows, generator=generator).split(batch_size):\n",
        "for rows in torch.randperm(n_rows).split(batch_size):\n",
    ),
]
