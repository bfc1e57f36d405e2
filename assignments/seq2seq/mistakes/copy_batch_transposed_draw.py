"""copy_batch draws the digits as (length, batch_size) and transposes.

Your src has the right shape but not the same digits as torch.randint(0, 10, (batch_size,
length), generator=generator): a generator hands out numbers in order, so the shape of the draw
decides which sequence gets which digits. Draw in the (batch_size, length) shape directly.
"""
CAUGHT_BY = ["hidden/test_copy_batch.py::test_copy_batch_matches_reference"]


def copy_batch(batch_size, length, generator=None):
    src = torch.randint(0, 10, (length, batch_size), generator=generator).T.contiguous()
    bos = torch.full((batch_size, 1), BOS, dtype=torch.long)
    return src, torch.cat([bos, src[:, :-1]], dim=1)
