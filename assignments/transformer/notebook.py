# %% [markdown]
# # Lab: a tiny causal Transformer that learns to count
#
# This notebook runs **your** `transformer.py` on the course's modular-counting
# task. Fill in a part in `transformer.py`, re-run the cells (Kernel > Restart &
# Run All picks up your edits), and look at the check after each part.
#
# | part | your code |
# | --- | --- |
# | 1. The task and the baseline log 8 | (provided `counting_data`) |
# | 2. A pre-norm block, checked against PyTorch | `TransformerBlock` |
# | 3. The language model and the causality check | `TinyCausalLM` |
# | 4. Shifted targets | `lm_loss` |
# | 5. Training with validation checkpointing | `train` |
# | 6. Sequential generation | `generate` |

# %%
import math

import matplotlib.pyplot as plt
import torch
import transformer
from torch import nn

torch.set_num_threads(1)
torch.manual_seed(7)


def todo(exc):
    """What to print when a part is not written yet."""
    if isinstance(exc, NameError):
        print("This cell needs the model of the cells above: make TinyCausalLM work first, then re-run.")
    else:
        print(f"Not implemented yet: {exc}. Fill it in in transformer.py, then re-run this cell.")


# %% [markdown]
# ## 1. The task: modular counting
#
# Vocabulary 8; every row counts up by one modulo 8 from a random start. The
# course's split: 256 training rows, 64 validation rows, 128 test rows, each of
# 13 tokens (12 inputs, 12 shifted targets). A model that knows nothing spreads
# its probability evenly over 8 tokens and pays `log 8 ≈ 2.079` nats per token:
# the **uniform baseline**.

# %%
VOCAB = 8
g = torch.Generator().manual_seed(1)
train_rows = transformer.counting_data(256, g)
val_rows = transformer.counting_data(64, g)
test_rows = transformer.counting_data(128, g)
print("train", tuple(train_rows.shape), "val", tuple(val_rows.shape), "test", tuple(test_rows.shape))
print("first rows:\n", train_rows[:3])
print(f"uniform baseline log {VOCAB} = {math.log(VOCAB):.4f}")

# %% [markdown]
# ## 2. A pre-norm block
#
# `x = x + self_attn(norm1(x))`, then `x = x + linear2(relu(linear1(norm2(x))))`.
# With the sub-modules named like PyTorch's, the weights of
# `nn.TransformerEncoderLayer(..., norm_first=True)` load into your block, and the
# outputs must agree to round-off. (Mask convention: True = blocked.)

# %%
try:
    d, h, ff, T = 16, 4, 32, 6
    torch_layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, batch_first=True, norm_first=True).double()
    block = transformer.TransformerBlock(d, h, ff).double()
    block.load_state_dict(torch_layer.state_dict())
    x = torch.randn(2, T, d, dtype=torch.float64)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
    for mask in (None, blocked):
        diff = (block(x, mask=mask) - torch_layer(x, src_mask=mask)).abs().max().item()
        print(f"mask={'causal' if mask is not None else None}: max difference from nn.TransformerEncoderLayer = {diff:.2e}")
    post = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, batch_first=True, norm_first=False).double()
    post.load_state_dict(torch_layer.state_dict())
    print(f"for comparison, the POST-norm layer with the same weights differs by {(block(x) - post(x)).abs().max().item():.2f}")
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: TransformerBlock

# %% [markdown]
# ## 3. The language model, and the course's causality check
#
# `x = embedding(tokens) * sqrt(d_model) + PE[:T]`, every block with the causal
# mask, then `norm` and `head`. The check the course runs before training:
# change the tokens from position 5 on; the logits at positions 0..4 must not
# move at all, the later ones must.

# %%
try:
    model = transformer.TinyCausalLM(VOCAB)
    model.eval()
    print("parameters:", sum(p.numel() for p in model.parameters()), " state_dict keys:", len(model.state_dict()))
    with torch.no_grad():
        original = train_rows[:4, :-1]
        changed = original.clone()
        changed[:, 5:] = (changed[:, 5:] + 3) % VOCAB
        per_position = (model(original) - model(changed)).abs().amax(dim=(0, 2))   # (12,)
    print("Causality check max prefix difference:", per_position[:5].max().item(), "(the course prints 0.0)")
    plt.figure(figsize=(6, 2.5))
    plt.bar(range(12), per_position.numpy(), color=["tab:green"] * 5 + ["tab:red"] * 7)
    plt.axvline(4.5, color="k", ls="--", lw=1)
    plt.xlabel("position")
    plt.ylabel("max |change in logits|")
    plt.title("tokens 5..11 changed: positions 0..4 must not move")
    plt.tight_layout()
    plt.show()
    try:
        model(torch.zeros(1, model.max_len + 1, dtype=torch.long))
        print("no error for T > max_len: raise ValueError there")
    except ValueError as exc:
        print("T > max_len raises ValueError:", exc)
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: TinyCausalLM

# %% [markdown]
# ## 4. Shifted targets
#
# `lm_loss` scores `model(tokens[:, :-1])` against `tokens[:, 1:]`: position t
# predicts token t + 1. An untrained model should pay about the uniform baseline.

# %%
try:
    with torch.no_grad():
        start = transformer.lm_loss(model, val_rows).item()
    print(f"untrained model: validation loss {start:.4f}  vs  log 8 = {math.log(VOCAB):.4f}")
except (NotImplementedError, NameError) as exc:
    todo(exc)

# %%
# CHECK: lm_loss

# %% [markdown]
# ## 5. Training, with the checkpoint chosen on validation
#
# AdamW (lr 3e-3), batches of 64, gradient clipping at 1.0, validation loss in
# eval mode after every epoch, and the weights of the best validation epoch kept.
# The test set is touched once, at the end, for the report.

# %%
try:
    torch.manual_seed(7)
    model = transformer.TinyCausalLM(VOCAB)
    history = transformer.train(model, train_rows, val_rows, epochs=25, lr=3e-3, batch_size=64, seed=0)
    best = history["best_epoch"]
    model.eval()
    with torch.no_grad():
        test_loss = transformer.lm_loss(model, test_rows).item()
    print(f"Validation-selected loss={history['val_loss'][best]:.4f} (epoch {best}); test={test_loss:.4f}; "
          f"uniform baseline={math.log(VOCAB):.4f}")
    epochs = range(len(history["train_loss"]))
    plt.figure(figsize=(6, 3.5))
    plt.plot(epochs, history["train_loss"], label="train (mean over rows, train mode)")
    plt.plot(epochs, history["val_loss"], label="validation (eval mode)")
    plt.axhline(math.log(VOCAB), color="gray", ls="--", label="uniform baseline log 8")
    plt.axvline(best, color="k", ls=":", label=f"best epoch {best}")
    plt.yscale("log")
    plt.xlabel("epoch")
    plt.ylabel("cross-entropy (nats)")
    plt.legend()
    plt.tight_layout()
    plt.show()
except NotImplementedError as exc:
    todo(exc)

# %%
# CHECK: train

# %% [markdown]
# ## 6. Parallel training, sequential generation
#
# Under teacher forcing one forward pass scores all 12 positions at once. Free
# generation cannot: each new token is part of the context for the next one, so
# `generate` is a loop of forward passes. Greedy decoding from the prompt `[2]`
# should reproduce the course's line `[2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5]`.

# %%
try:
    with torch.no_grad():
        forced = model(test_rows[:1, :-1]).argmax(-1)          # all 12 predictions from ONE forward pass
    print("teacher-forced predictions (one pass):", forced[0].tolist())
    print("true next tokens                     :", test_rows[0, 1:].tolist())
    prompts = torch.tensor([[2], [5], [0]])
    generated = transformer.generate(model, prompts, 11)       # 11 forward passes, one per new token
    for row in generated:
        print("Generated:", row.tolist())
    long_prompt = transformer.counting_data(1, torch.Generator().manual_seed(3), length=model.max_len + 5)
    out = transformer.generate(model, long_prompt, 4)
    print(f"a prompt of {long_prompt.shape[1]} tokens (> max_len={model.max_len}) continues with", out[0, -4:].tolist())
except (NotImplementedError, NameError) as exc:
    todo(exc)

# %%
# CHECK: generate

# %% [markdown]
# ## To try on your own
#
# * Ablate the position information (skip `+ PE[:T]` in a copy of your model)
#   and retrain with everything else fixed. With the reference solution the test
#   loss barely moves ({{transformer_pe_counting}}). Why does counting not need
#   positions in a *causal* model (what does the next token depend on, and what
#   does the mask already tell each position)? Design a task where it would.
# * Remove the causal mask: the training loss falls even faster. Why is that
#   bad news, and what does `generate` do then?
# * Read the course's warning: there are only eight distinct sequences, so this
#   tests the mechanism, not linguistic generalisation.
