# %% [markdown]
# # Lab: scaled dot-product attention
#
# This notebook runs **your** `attention.py` on the course's examples. Fill in a
# function in `attention.py`, re-run the cells (Kernel > Restart & Run All picks
# up your edits), and look at the check after each part.
#
# | part | your function |
# | --- | --- |
# | 1. A stable softmax | `softmax` |
# | 2. The worked example (output 20.0) | `scaled_dot_product_attention` |
# | 3. Why divide by sqrt(d_k)? | `softmax` again |
# | 4. Causal attention, as a heatmap | `causal_mask` |
# | 5. Padding, and both masks at once | `padding_mask` |

# %%
import math

import attention
import matplotlib.pyplot as plt
import torch

torch.manual_seed(0)


def todo(exc):
    """What to print when a function is not written yet."""
    print(f"Not implemented yet: {exc}. Fill it in in attention.py, then re-run this cell.")


# %% [markdown]
# ## 1. A stable softmax
#
# `softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m)` with `m` the maximum of the
# slice: subtracting `m` changes nothing mathematically but keeps `exp` from
# overflowing. The course's check: `softmax([2, 0.5, -1]) ≈ [0.7856, 0.1753, 0.0391]`.

# %%
try:
    x = torch.tensor([2.0, 0.5, -1.0])
    print("your softmax([2, 0.5, -1]):", attention.softmax(x).tolist())
    print("torch.softmax             :", torch.softmax(x, dim=-1).tolist())

    big = torch.tensor([1000.0, 999.0, -1000.0])
    naive = torch.exp(big) / torch.exp(big).sum()
    print("\nnaive exp(x)/sum exp(x) on [1000, 999, -1000]:", naive.tolist(), " <- exp(1000) overflows")
    print("your softmax on [1000, 999, -1000]          :", attention.softmax(big).tolist())

    blocked = torch.tensor([[0.5, float("-inf"), 1.0], [float("-inf")] * 3])
    print("\n-inf entries get weight exactly 0, an all -inf row gives zeros:")
    print(attention.softmax(blocked))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: softmax

# %% [markdown]
# ## 2. The worked example
#
# One query `[1, 0]`; keys `[1, 0]`, `[0, 1]`, `[1, 1]`; values 10, 20, 30; `d_k = 2`.
# Scores `q·k / sqrt(2) = [0.707, 0, 0.707]`, weights `[0.401, 0.198, 0.401]`,
# output `0.401·10 + 0.198·20 + 0.401·30 = 20.0`.

# %%
try:
    q = torch.tensor([[1.0, 0.0]])                          # (1, 2): one query
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (3, 2): three keys
    v = torch.tensor([[10.0], [20.0], [30.0]])              # (3, 1): their values
    out, w = attention.scaled_dot_product_attention(q, k, v)
    print("weights:", [round(float(a), 3) for a in w[0]], " (course: [0.401, 0.198, 0.401])")
    print("output :", round(float(out[0, 0]), 2), " (course: 20.0)")
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# The three properties the grader checks on random inputs: rows of weights sum to
# 1, weights are non-negative, and so each output lies within the range of the
# values. Here with `n_q != n_k` and `d_k != d_v`, and a batch dimension.

# %%
try:
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    out, w = attention.scaled_dot_product_attention(q, k, v)
    print("shapes: output", tuple(out.shape), "(B, n_q, d_v); weights", tuple(w.shape), "(B, n_q, n_k)")
    print("rows sum to 1       :", torch.allclose(w.sum(-1), torch.ones(2, 3)))
    print("weights non-negative:", bool((w >= 0).all()))
    lo, hi = v.amin(dim=1, keepdim=True), v.amax(dim=1, keepdim=True)
    print("outputs inside the range of the values:", bool(((out >= lo - 1e-6) & (out <= hi + 1e-6)).all()))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: scaled_dot_product_attention

# %% [markdown]
# ## 3. Why divide by sqrt(d_k)?
#
# `q·k` is a sum of `d_k` products of unit-variance components, so its variance is
# `d_k`. Unscaled scores grow with the key width, the softmax saturates (one weight
# near 1) and its gradient vanishes. Below, your softmax on 10 keys, with and
# without the `1/sqrt(d_k)`. (The course used 20 000 trials; 2 000 keep this cell
# fast and give the same picture: largest weight 0.49 -> 0.97 unscaled but about
# 0.32 scaled, gradient 0.073 -> 0.007 unscaled but about 0.088 scaled.)

# %%
def saturation(d_k, scale, trials=2000, n_keys=10):
    """Mean largest weight and mean softmax gradient norm for random unit-variance q, k."""
    q, k = torch.randn(trials, 1, d_k), torch.randn(trials, n_keys, d_k)
    s = (q @ k.transpose(1, 2)).squeeze(1)                       # (trials, n_keys)
    if scale:
        s = s / math.sqrt(d_k)
    s = s.clone().requires_grad_()
    w = attention.softmax(s, dim=-1)                             # (trials, n_keys)
    w[:, 0].sum().backward()                                     # how much does moving the scores move weight 0?
    return w.max(-1).values.mean().item(), s.grad.norm(dim=-1).mean().item(), s.std().item()


try:
    sizes = [4, 16, 64, 256, 1024]
    rows = []
    print(" d_k  std(q.k)  std scaled | largest weight: unscaled  scaled | gradient norm: unscaled  scaled")
    for d in sizes:
        w_raw, g_raw, sd_raw = saturation(d, scale=False)
        w_sc, g_sc, sd_sc = saturation(d, scale=True)
        rows.append((w_raw, w_sc, g_raw, g_sc))
        print(f"{d:4d}  {sd_raw:8.2f}  {sd_sc:10.2f} | {w_raw:24.2f}  {w_sc:6.2f} | {g_raw:23.4f}  {g_sc:6.4f}")

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.5))
    a1.semilogx(sizes, [r[0] for r in rows], "o-", label="unscaled")
    a1.semilogx(sizes, [r[1] for r in rows], "o-", label="scaled by 1/sqrt(d_k)")
    a1.set(xlabel="d_k", ylabel="mean largest weight", title="the softmax saturates without scaling")
    a2.semilogx(sizes, [r[2] for r in rows], "o-", label="unscaled")
    a2.semilogx(sizes, [r[3] for r in rows], "o-", label="scaled by 1/sqrt(d_k)")
    a2.set(xlabel="d_k", ylabel="mean gradient norm", title="...and its gradient vanishes")
    a1.legend()
    a2.legend()
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# ## 4. Causal attention
#
# `causal_mask(n)` is True (blocked) strictly above the diagonal: position `i` sees
# positions `0..i`. Masked scores become `-inf` before the softmax, so the weights
# form a lower-triangular matrix whose rows still sum to 1.

# %%
try:
    print(attention.causal_mask(5))
    torch.manual_seed(0)
    n, d = 5, 4
    x = torch.randn(n, d)                                        # 5 tokens of width 4; q = k = v = x
    out, w = attention.scaled_dot_product_attention(x, x, x, mask=attention.causal_mask(n))
    print("rows sum to 1:", [round(float(s), 4) for s in w.sum(-1)])

    plt.figure(figsize=(4, 3.5))
    plt.imshow(w.detach(), cmap="viridis", vmin=0, vmax=1)
    plt.colorbar(label="attention weight")
    plt.xlabel("key position (what it looks at)")
    plt.ylabel("query position (who is looking)")
    plt.title("causal self-attention weights")
    for i in range(n):
        for j in range(n):
            light = float(w[i, j]) > 0.6  # viridis turns yellow there: dark text stays readable
            plt.text(j, i, f"{float(w[i, j]):.2f}", ha="center", va="center", color="k" if light else "w", fontsize=8)
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %% [markdown]
# The test that matters: with the causal mask, changing the tokens at positions 3
# and 4 leaves the outputs at positions 0, 1, 2 unchanged; without a mask they
# change, i.e. the future leaks into the past.

# %%
try:
    torch.manual_seed(0)
    n, d = 5, 4
    x = torch.randn(n, d)                                        # the same 5 tokens as above
    x2 = x.clone()
    x2[3:] = torch.randn(2, d)                                   # a different future
    causal = attention.causal_mask(n)
    same = torch.allclose(attention.scaled_dot_product_attention(x, x, x, mask=causal)[0][:3],
                          attention.scaled_dot_product_attention(x2, x2, x2, mask=causal)[0][:3])
    leak = not torch.allclose(attention.scaled_dot_product_attention(x, x, x)[0][:3],
                              attention.scaled_dot_product_attention(x2, x2, x2)[0][:3])
    print("with the causal mask, outputs 0..2 unchanged:", same, "(should be True)")
    print("without a mask, outputs 0..2 change         :", leak, "(should be True)")
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: causal_mask

# %% [markdown]
# ## 5. Padding, and both masks at once
#
# A batch of sequences of lengths 5, 3 and 2, padded to 5 positions. The padding
# mask blocks the padded keys; combined with the causal mask by broadcasting
# (`causal[None] | pad[:, None]`, shape (B, T, T)), each query sees only earlier,
# real tokens. The weight given to padding is exactly 0.

# %%
try:
    lengths = torch.tensor([5, 3, 2])
    pad = attention.padding_mask(lengths, 5)                     # (3, 5)
    print("padding_mask:\n", pad)
    both = attention.causal_mask(5)[None, :, :] | pad[:, None, :]  # (3, 5, 5)
    xb = torch.randn(3, 5, 4)
    out, w = attention.scaled_dot_product_attention(xb, xb, xb, mask=both)
    print("weight on blocked (future or padding) keys:", float(w.masked_fill(~both, 0).sum()))
    print("weights of sequence 2 (length 2):\n", w[2].detach().numpy().round(2))
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: padding_mask

# %% [markdown]
# ## 6. One word, two contexts: "bank" through one untrained attention layer
#
# The course (Week 9, §1.3): a static embedding gives "bank" one vector in every
# sentence; one self-attention layer, even untrained, makes its output depend on
# the neighbours. Seeded exactly as the lecture seeds it (`torch.manual_seed(0)`,
# then the embeddings, then `W_q, W_k, W_v`), the lecture's formula gives a
# distance of **2.841** between the two "bank" outputs; your
# `scaled_dot_product_attention` must give the same.

# %%
torch.manual_seed(0)
d = 6
bank_vocab = ["the", "river", "money", "bank", "was", "deep", "closed"]
E = {w: torch.randn(d) for w in bank_vocab}
Wq, Wk, Wv = (torch.randn(d, d) * 0.7 for _ in range(3))
s1, s2 = "the river bank was deep".split(), "the money bank was closed".split()


def lecture_contextual(sentence):
    """The lecture's line, with torch.softmax."""
    x = torch.stack([E[w] for w in sentence])
    return torch.softmax((x @ Wq) @ (x @ Wk).T / d**0.5, -1) @ (x @ Wv)


v1, v2 = lecture_contextual(s1)[s1.index("bank")], lecture_contextual(s2)[s2.index("bank")]
print("static embedding of 'bank' is one fixed vector:", E["bank"].numpy().round(2))
print("lecture's formula, distance between the two contextual vectors:", round((v1 - v2).norm().item(), 3),
      "(the course prints 2.841)")
try:
    def contextual(sentence):
        """The same layer, with your attention."""
        x = torch.stack([E[w] for w in sentence])
        return attention.scaled_dot_product_attention(x @ Wq, x @ Wk, x @ Wv)[0]

    u1, u2 = contextual(s1)[s1.index("bank")], contextual(s2)[s2.index("bank")]
    print("your attention, 'bank' in the river sentence:", u1.detach().numpy().round(2))
    print("your attention, 'bank' in the money sentence:", u2.detach().numpy().round(2))
    print("your attention, distance:", round((u1 - u2).norm().item(), 3))
except NotImplementedError as exc:
    todo(exc)
