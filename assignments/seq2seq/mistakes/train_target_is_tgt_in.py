"""train_copy scores the logits against tgt_in instead of src.

Your loss compares the predictions with the decoder's INPUT. The target is src, the digits to
copy; tgt_in (BOS, then src shifted right) is only what the decoder reads. Against tgt_in the
model learns to repeat the token it was just given, which is useless when running free.
"""
CAUGHT_BY = [
    "hidden/test_train.py::test_train_copy_follows_reference",
    "hidden/test_train.py::test_train_copy_learns_to_copy",
]


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        src, tgt_in = copy_batch(batch_size, length, generator)
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_in.reshape(-1))  # wrong target
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    return losses
