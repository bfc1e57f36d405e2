"""The numbers transformer's handout and notebook quote (``{{name}}``), measured on the reference.

Run by ``autograder/release/handout_numbers.py`` in a fresh interpreter on the pinned kernels (one thread);
the result is cached in ``numbers.json`` beside this file, with a fingerprint of this file, the
reference, the torch version and the kernels.
"""

from __future__ import annotations


def numbers(ref) -> dict[str, str]:
    """The lab's reference run, and the positional-encoding ablation on the counting task."""
    import torch

    def run(make_data, positions: bool) -> tuple[float, tuple[float, int], list[int]]:
        g = torch.Generator().manual_seed(1)  # the lab notebook's data and model seeds
        train, val, test = make_data(256, g), make_data(64, g), make_data(128, g)
        torch.manual_seed(7)
        model = ref.TinyCausalLM(8)
        if not positions:
            model.positions = torch.zeros_like(model.positions)
        history = ref.train(model, train, val, epochs=25, lr=3e-3, batch_size=64, seed=0)
        model.eval()
        with torch.no_grad():
            test_loss = ref.lm_loss(model, test).item()
        best = history["best_epoch"]
        return test_loss, (history["val_loss"][best], best), ref.generate(model, torch.tensor([[2]]), 11)[0].tolist()

    counting_with, best, generated = run(ref.counting_data, True)
    counting_without = run(ref.counting_data, False)[0]
    return {
        "transformer_reference_run": (
            f"Validation-selected loss={best[0]:.4f} (epoch {best[1]}); test={counting_with:.4f}; uniform baseline=2.0794\n"
            f"Generated: {generated}"
        ),
        "transformer_pe_counting": f"test loss {counting_without:.4f} without positions, {counting_with:.4f} with them",
    }
