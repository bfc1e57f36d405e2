"""TinyCausalLM: values against the reference, state_dict layout, max_len and causality."""

import pytest
import torch
from support_transformer import positional_table_keys, randomise_, state_dict_of, with_own_buffers

from autograder.checks import expect_close, expect_dtype, expect_raises, expect_shape, expect_true

pytestmark = pytest.mark.grades("TinyCausalLM")  # the function these tests grade (summary, dashboard, pytest -m)

# (vocab, d_model, n_heads, d_ff, n_layers, max_len, batch, T, dtype)
CASES = {
    "course sizes, float64": (8, 32, 4, 64, 2, 64, 3, 12, torch.float64),
    "3 layers, T=max_len, float64": (11, 16, 2, 24, 3, 10, 2, 10, torch.float64),
    "1 layer, float32": (8, 32, 4, 64, 1, 64, 2, 9, torch.float32),
}


def _model_args(case):
    vocab, d, h, ff, n_layers, max_len = CASES[case][:6]
    return (vocab,), {"d_model": d, "n_heads": h, "d_ff": ff, "n_layers": n_layers, "max_len": max_len}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_lm_matches_reference(student, reference, gen, case):
    """TinyCausalLM: logits equal the reference model's with the same weights"""
    vocab, d, h, ff, n_layers, max_len, B, T, dtype = CASES[case]
    args, kwargs = _model_args(case)
    ref = randomise_(reference.TinyCausalLM(*args, **kwargs).double(), gen)
    tokens = torch.randint(vocab, (B, T), generator=gen)
    with torch.no_grad():
        want = ref(tokens)                                                       # (B, T, vocab) float64
    sd = state_dict_of(ref, dtype)

    model = student.TinyCausalLM(*args, **kwargs)
    if dtype == torch.float64:
        model.double()
    model.load_state_dict(with_own_buffers(model, sd))  # a persistent positional buffer keeps its own table
    got = model(tokens)
    what = (f"TinyCausalLM({vocab}, d_model={d}, n_heads={h}, d_ff={ff}, n_layers={n_layers}, max_len={max_len}) "
            f"logits for tokens of shape {tuple(tokens.shape)} ({str(dtype).replace('torch.', '')})")
    expect_shape(got, (B, T, vocab), what)
    if dtype == torch.float32:
        expect_dtype(got, torch.float32, what + ": a float32 model must return float32 logits "
                     "(build the positional table in float32, or cast it to the embedding's dtype)")
    expect_close(
        got, want, what,
        # float64: round-off is below 1e-11, but the contract lets the positional table be built in
        # float32 before .double() (the course's lab: exp(arange * -ln(10000)/d) in float32). Measured
        # over 20 seeds x 3 sizes (T up to 64; variants/persistent_float32_positions.py), such a table
        # moves float64 logits by up to 2.7e-7: 3e-6 allows ten times that, and every catalogued mistake
        # moves them by more than 1e-2. float32: relative precision 1e-7 over a few products of width <= 64
        atol=3e-6 if dtype == torch.float64 else 2e-4,
        rtol=0.0 if dtype == torch.float64 else 1e-4,
        hint="The forward pass is x = embedding(tokens) * sqrt(d_model) + PE[:T] (sinusoidal), every block "
        "with the causal mask (True strictly above the diagonal: each position still sees itself), then the "
        "final norm, then the head. Check the sqrt(d_model) scale, that the positions are added, that the "
        "diagonal is not blocked, and that each block is a separate TransformerBlock (not one block repeated).",
    )


def test_state_dict_keys(student, reference):
    """TinyCausalLM: parameters are exactly embedding, blocks, norm and head (buffers may sit beside them)"""
    kwargs = {"d_model": 16, "n_heads": 2, "d_ff": 24, "n_layers": 3, "max_len": 20}
    want = {k: tuple(v.shape) for k, v in reference.TinyCausalLM(7, **kwargs).state_dict().items()}
    model = student.TinyCausalLM(7, **kwargs)
    state = model.state_dict()
    tables = positional_table_keys({k: v for k, v in state.items() if k not in want}, 20, 16)
    if tables:  # a table is allowed as a buffer only: the contract's table is fixed, never learned
        parameters = student.gradients(model, torch.zeros(1, 4, dtype=torch.long), wrt=(), params=True)["params"]
        learned = sorted(k for k in tables if k in parameters)
        expect_true(
            not learned,
            f"TinyCausalLM(7, d_model=16, ..., max_len=20): {learned} is a learned parameter of the shape of a "
            "positional table. The contract's positional table is fixed (sinusoidal, no parameters): compute it, "
            "or keep it with self.register_buffer(...), never as nn.Parameter or nn.Embedding.",
            got=learned,
        )
    got = {k: tuple(v.shape) for k, v in state.items() if k not in tables}
    if set(got) - set(want):  # other buffers (a causal mask kept as nanoGPT keeps it) are not parameters
        parameters = student.gradients(model, torch.zeros(1, 4, dtype=torch.long), wrt=(), params=True)["params"]
        got = {k: shape for k, shape in got.items() if k in want or k in parameters}
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))

    expect_true(
        not missing and not extra,
        "TinyCausalLM(7, d_model=16, n_heads=2, d_ff=24, n_layers=3, max_len=20).state_dict(): "
        + (f"missing keys {missing}; " if missing else "") + (f"unexpected parameters {extra}; " if extra else "")
        + "expected exactly the parameters of embedding, blocks.0-2 (TransformerBlock), norm and head (and, if "
        "you keep one, the positional table as a buffer of shape (max_len, d_model), (1, max_len, d_model) or "
        "(max_len, 1, d_model)). Name the modules as the "
        "handout does, so that models of the same size load each other's weights.",
        got=sorted(got),
    )
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    expect_true(not wrong, f"TinyCausalLM state_dict: wrong shapes (got, expected): {wrong}.")


def test_too_long_raises(student, gen):
    """TinyCausalLM: ValueError when the input is longer than max_len (and none at exactly max_len)"""
    model = student.TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=6)
    expect_true(model.max_len == 6, f"TinyCausalLM(..., max_len=6).max_len is {model.max_len!r}, expected 6.")
    ok = model(torch.randint(8, (2, 6), generator=gen))
    expect_true(
        tuple(torch.as_tensor(ok).shape) == (2, 6, 8),
        f"TinyCausalLM(8, ..., max_len=6) on tokens (2, 6): expected logits (2, 6, 8), got "
        f"{tuple(torch.as_tensor(ok).shape)}. A sequence of exactly max_len tokens is allowed.",
    )
    expect_raises(lambda: model(torch.randint(8, (2, 7), generator=gen)), (ValueError,),
                  "TinyCausalLM(8, ..., max_len=6) on tokens of shape (2, 7): the positional table has only "
                  "max_len rows, so check T > max_len and raise ValueError with a clear message")


def test_causality(student, reference, gen):
    """TinyCausalLM: changing tokens from position t on never changes the logits before t"""
    vocab, T, B = 8, 10, 2
    kwargs = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_layers": 2, "max_len": 16}
    ref = randomise_(reference.TinyCausalLM(vocab, **kwargs).double(), gen)
    model = student.TinyCausalLM(vocab, **kwargs)
    model.double()
    model.load_state_dict(with_own_buffers(model, state_dict_of(ref, torch.float64)))
    model.eval()
    base = torch.randint(vocab, (B, T), generator=gen)
    batch = [base]
    for t in range(1, T):                                                      # perturb every suffix t..T-1
        changed = base.clone()
        changed[:, t:] = (changed[:, t:] + torch.randint(1, vocab, (B, T - t), generator=gen)) % vocab
        batch.append(changed)
    logits = torch.as_tensor(model(torch.cat(batch)))                          # (T*B, T, vocab), one call
    original = logits[:B]
    for t in range(1, T):
        out = logits[t * B:(t + 1) * B]
        # exact computation on identical prefixes: only float64 round-off may differ
        leak = float((out[:, :t] - original[:, :t]).abs().max())
        expect_true(
            leak <= 1e-9,
            f"TinyCausalLM causality: changing the tokens at positions {t}..{T - 1} (input shape ({B}, {T})) "
            f"changed the logits at positions 0..{t - 1} by up to {leak:.3g}. Information leaks from the future: "
            "pass the causal mask (True strictly above the diagonal) to every block, the course's 'no peeking'.",
        )
        moved = float((out[:, t:] - original[:, t:]).abs().max())
        expect_true(
            moved > 1e-6,
            f"TinyCausalLM causality: changing the tokens at positions {t}..{T - 1} did not change the logits at "
            f"positions {t}..{T - 1} at all (max change {moved:.3g}). A position must see its own token and the "
            "ones before it: do not block the diagonal, and add the token embeddings to the positions.",
        )
    # pays only when the same call's logits are right too (a model that reads only its own token is causal too)
    with torch.no_grad():
        want = ref.eval()(torch.cat(batch))
    expect_close(logits, want, f"TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=2, max_len=16) logits for "
                 f"tokens of shape {(T * B, T)} (float64), with the reference's weights loaded", atol=3e-6,
                 hint="(This test checks a property, and pays only when the values of the same call are right too.)")
