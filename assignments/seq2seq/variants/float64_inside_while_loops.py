"""Attention computed in float64 inside, matmul instead of bmm, while loops, log_softmax + gather loss.

A correct solution in another style: it must score 100.
"""


def attend(query, enc):
    q, k = query.double(), enc.double()
    scores = (k @ q[:, :, None])[:, :, 0] / math.sqrt(k.shape[2])  # (B, T)
    weights = torch.softmax(scores, dim=-1)  # (B, T)
    context = (weights[:, None, :] @ k)[:, 0, :]  # (B, h)
    return context.to(enc.dtype), weights.to(enc.dtype)


def _forward(self, src, tgt_in):
    enc, last = self.encoder(self.emb(src))
    state = last[-1]
    B, T = tgt_in.shape
    result = torch.zeros(B, T, self.out.out_features, dtype=enc.dtype)
    t = 0
    while t < T:
        logits, state = self.step(tgt_in[:, t], state, enc)
        result[:, t] = logits
        t += 1
    return result


AttnSeq2Seq.forward = _forward


def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    g = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(params=model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8)
    losses = []
    while len(losses) < steps:
        src, tgt_in = copy_batch(batch_size, length, generator=g)
        log_probs = torch.log_softmax(model(src, tgt_in), dim=-1)  # (B, T, V)
        loss = -log_probs.gather(2, src[:, :, None]).mean()
        model.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.detach().item())
    return losses
