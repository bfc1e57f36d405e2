# %% [markdown]
# # Lab: multi-head attention and positional encoding
#
# This notebook runs **your** `multihead.py` on the course's examples. Fill in a
# function in `multihead.py`, re-run the cells (Kernel > Restart & Run All picks
# up your edits), and look at the check after each part.
#
# | part | your code |
# | --- | --- |
# | 1. Cutting the width into heads | `split_heads` |
# | 2. Concatenating them back | `merge_heads` |
# | 3. More heads, same parameters (16,640 at d = 64) | `MultiHeadAttention.__init__` |
# | 4. Matching `nn.MultiheadAttention` | `MultiHeadAttention.forward` |
# | 5. What each head looks at | per-head weights |
# | 6. The price: quadratic cost | (reading) |
# | 7. Sinusoidal positions, as an image | `sinusoidal_positions` |
# | 8. "dog bites man" vs "man bites dog" | both |

# %%

import matplotlib.pyplot as plt
import multihead
import torch
from torch import nn

torch.manual_seed(0)


def todo(exc):
    """What to print when a function is not written yet."""
    print(f"Not implemented yet: {exc}. Fill it in in multihead.py, then re-run this cell.")


# %% [markdown]
# ## 1. Cutting the width into heads
#
# With model width d and h heads, each head works with d/h features. Head i
# holds features `[i*d/h, (i+1)*d/h)` of **every** position: reshape (B, T, d)
# to (B, T, h, d/h), then swap the T and h axes. Below, feature f of position t
# holds the number `10*t + f`, so you can read the layout off the printout:
# head 0 should show features 0-3 of positions 0, 1, 2 and head 1 features 4-7.

# %%
try:
    x = (10 * torch.arange(3)[:, None] + torch.arange(8)[None, :]).float()[None]   # (1, 3, 8)
    heads = multihead.split_heads(x, 2)
    print("x (1, 3, 8):\n", x[0])
    print("split_heads(x, 2) has shape", tuple(heads.shape), "(B, h, T, d_h)")
    for i in range(heads.shape[1]):
        print(f"head {i}:\n", heads[0, i])
    print("\nthe wrong way, x.view(1, 2, 3, 4), puts positions 0 and 1 into head 0:\n", x.view(1, 2, 3, 4)[0, 0])
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: split_heads

# %% [markdown]
# ## 2. Concatenating the heads back
#
# `merge_heads` undoes `split_heads`: position t of the result is head 0's
# features, then head 1's, ... This is the **concatenation** in
# `MultiHead = Concat(head_1, ..., head_h) W_O` (not an average).

# %%
try:
    x = torch.randn(2, 5, 12)
    back = multihead.merge_heads(multihead.split_heads(x, 3))
    print("merge_heads(split_heads(x, 3)) == x:", torch.equal(back, x))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: merge_heads

# %% [markdown]
# ## 3. More heads, same parameters
#
# W_Q, W_K, W_V and W_O are each d x d, plus four bias vectors: 4d² + 4d
# parameters **whatever the number of heads**. The course's table at d = 64:
# 16,640 for 1, 2, 4 and 8 heads. Heads cut the same width into smaller
# subspaces; they do not add weights.

# %%
def count(m):
    return sum(p.numel() for p in m.parameters())


print(f"{'heads':>5}  {'head size':>9}  {'yours':>7}  {'nn.MultiheadAttention':>21}  {'4d^2 + 4d':>9}")
for h in (1, 2, 4, 8):
    try:
        yours = count(multihead.MultiHeadAttention(64, h))
    except NotImplementedError:
        yours = "TODO"
    print(f"{h:5d}  {64 // h:9d}  {yours:>7}  {count(nn.MultiheadAttention(64, h)):21d}  {4 * 64 * 64 + 4 * 64:9d}")
try:
    print("\nyour parameters:", {k: tuple(v.shape) for k, v in multihead.MultiHeadAttention(64, 4).state_dict().items()})
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# ## 4. Matching `nn.MultiheadAttention`
#
# The course's check, with your module: load the weights of a random
# `nn.MultiheadAttention(8, 2)` (random biases too: torch starts them at 0)
# into yours with `strict=True` and compare. Blocked = `True`; here a causal
# mask, so query t only sees keys 0..t.

# %%
try:
    torch.manual_seed(0)
    d, h, n = 8, 2, 5
    mha = nn.MultiheadAttention(d, h, batch_first=True)
    with torch.no_grad():
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    mine = multihead.MultiHeadAttention(d, h)
    mine.load_state_dict(mha.state_dict(), strict=True)
    x = torch.randn(1, n, d)
    causal = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    want, want_w = mha(x, x, x, attn_mask=causal, average_attn_weights=False)
    got, got_w = mine(x, x, x, mask=causal)
    print("output matches nn.MultiheadAttention: ", torch.allclose(got, want, atol=1e-5))
    print("per-head weights match (shape", tuple(got_w.shape), "):", torch.allclose(got_w, want_w, atol=1e-6))
    print("max |difference|:", (got - want).abs().max().item())
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: MultiHeadAttention

# %% [markdown]
# ## 5. What each head looks at
#
# Each head has its own attention pattern: its own slice of W_Q and W_K decides
# what is "relevant". Below, 4 heads of a random (untrained) module over 8
# tokens with a causal mask: every pattern is lower-triangular (blocked = 0),
# and every row sums to 1. Trained heads specialise (previous token, a subject,
# a distant noun), though not always into clean human categories.

# %%
try:
    torch.manual_seed(1)
    d, h, n = 32, 4, 8
    m = multihead.MultiHeadAttention(d, h)
    x = torch.randn(1, n, d)
    causal = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    with torch.no_grad():
        _, w = m(x, x, x, mask=causal)                       # (1, h, n, n)
    fig, axes = plt.subplots(1, h, figsize=(3.2 * h, 3.2))
    for i, ax in enumerate(axes):
        ax.imshow(w[0, i], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {i}")
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
    plt.suptitle("per-head attention weights (causal mask)")
    plt.tight_layout()
    plt.show()
    print("row sums of head 0:", w[0, 0].sum(-1).tolist())
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# ## 6. The price: quadratic cost
#
# Every token attends to every token, so each head builds an n x n score
# matrix and the work is O(n²d). The course's table (d = 512): doubling the
# length quadruples the cost.

# %%
print("      n     score entries    memory (float32)    n^2 * d operations (d = 512)")
for n in (512, 2048, 8192, 32768, 131072):
    entries = n * n
    mem = entries * 4
    unit = ("MB", mem / 1e6) if mem < 1e9 else ("GB", mem / 1e9)
    print(f"{n:7d}   {entries:14.2e}    {unit[1]:8.1f} {unit[0]}        {n * n * 512:.2e}")

# %% [markdown]
# ## 7. Sinusoidal positions
#
# `PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`,
# `PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))`. Each column pair is one
# frequency: the left columns oscillate fast (wavelength 2π positions), the right
# ones slowly (up to 2π·10000). Every row, i.e. every position, is a different
# vector; row 0 is [0, 1, 0, 1, ...].

# %%
try:
    pe = multihead.sinusoidal_positions(100, 64)
    print("shape", tuple(pe.shape), pe.dtype, "| row 0 starts", pe[0, :6].tolist())
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    im = ax1.imshow(pe, cmap="RdBu", aspect="auto", vmin=-1, vmax=1)
    ax1.set_xlabel("feature (even = sin, odd = cos)")
    ax1.set_ylabel("position")
    ax1.set_title("sinusoidal_positions(100, 64)")
    fig.colorbar(im, ax=ax1)
    for col in (0, 1, 10, 30):
        ax2.plot(pe[:, col], label=f"column {col}")
    ax2.set_xlabel("position")
    ax2.legend()
    ax2.set_title("a few columns: fast to slow")
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: sinusoidal_positions

# %% [markdown]
# ## 8. "dog bites man" vs "man bites dog"
#
# Self-attention without positions sees a **set** of words: permuting the
# tokens only permutes the outputs, so the output for "bites" is the same in
# both sentences. Adding a different position vector to each token breaks the
# tie: now the two sentences are told apart.

# %%
try:
    torch.manual_seed(0)
    d = 16
    m = multihead.MultiHeadAttention(d, 2)
    emb = {w: torch.randn(d) for w in ("dog", "bites", "man")}
    a = torch.stack([emb[w] for w in ("dog", "bites", "man")])[None]    # (1, 3, d)
    b = torch.stack([emb[w] for w in ("man", "bites", "dog")])[None]
    with torch.no_grad():
        out_a, _ = m(a, a, a)
        out_b, _ = m(b, b, b)
        print("'bites' in 'dog bites man':", out_a[0, 1, :6].numpy().round(3))
        print("'bites' in 'man bites dog':", out_b[0, 1, :6].numpy().round(3))
        print("identical without positions:", torch.allclose(out_a[0, 1], out_b[0, 1], atol=1e-6))
        pe = multihead.sinusoidal_positions(3, d)
        out_a, _ = m(a + pe, a + pe, a + pe)
        out_b, _ = m(b + pe, b + pe, b + pe)
        print("identical with sinusoidal positions added:", torch.allclose(out_a[0, 1], out_b[0, 1], atol=1e-6))
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# ## 9. The quadratic cost, measured on this machine
#
# Part 6 printed the lecture's table; here is the same growth measured with your
# `MultiHeadAttention` (d = 64, 4 heads, float32, one thread): the time of one
# forward pass, the memory it allocates (PyTorch's profiler), and the size of the
# (B, h, n, n) weights it returns. Doubling n should multiply each by about 4.

# %%
import contextlib
import math
import os
import time

from torch.profiler import ProfilerActivity, profile


@contextlib.contextmanager
def quiet_stderr():
    """The profiler's start/stop lines go to the process's stderr: hide them."""
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


try:
    torch.set_num_threads(1)
    mha = multihead.MultiHeadAttention(64, 4)
    sizes, rows = [128, 256, 512, 1024], []
    with torch.no_grad():
        for n in sizes:
            x = torch.randn(1, n, 64)
            mha(x, x, x)                                                # warm-up
            times = []
            for _ in range(5):                                          # the best of 5
                start = time.perf_counter()
                _, weights = mha(x, x, x)
                times.append(time.perf_counter() - start)
            with quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
                mha(x, x, x)
            allocated = sum(e.self_cpu_memory_usage for e in prof.key_averages() if e.self_cpu_memory_usage > 0)
            rows.append((n, min(times), allocated, weights.nelement() * weights.element_size()))
    print("      n   time (ms)   memory allocated (MB)   weights (B, h, n, n) (MB)   n^2 * d")
    for n, seconds, allocated, weight_bytes in rows:
        print(f"{n:7d}   {seconds * 1e3:9.2f}   {allocated / 1e6:14.2f}          {weight_bytes / 1e6:14.2f}"
              f"          {n * n * 64:.2e}")


    def exponent(values):
        """Least-squares slope of log(value) against log(n): the power of n it grows with."""
        xs, ys = [math.log(n) for n in sizes], [math.log(v) for v in values]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        return sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sum((a - mx) ** 2 for a in xs)

    print(f"fitted growth: time ~ n^{exponent([r[1] for r in rows]):.2f}, memory ~ n^{exponent([r[2] for r in rows]):.2f} "
          "(the lecture's table: n^2; small n pays fixed overheads, large n the memory traffic)")
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.loglog(sizes, [r[1] * 1e3 for r in rows], "o-", label="measured time (ms)")
    ax.loglog(sizes, [rows[-1][1] * 1e3 * (n / sizes[-1]) ** 2 for n in sizes], "k--", label="n² through the last point")
    ax.set_xlabel("sequence length n")
    ax.legend()
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)
