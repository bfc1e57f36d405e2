"""The numbers seq2seq's handout and notebook quote (``{{name}}``), measured on the reference.

Run by ``autograder/release/handout_numbers.py`` in a fresh interpreter on the pinned kernels (one thread);
the result is cached in ``numbers.json`` beside this file, with a fingerprint of this file, the
reference, the torch version and the kernels.
"""

from __future__ import annotations


def numbers(ref) -> dict[str, str]:
    """The accuracy table (2,500 steps per length) and the notebook's short runs."""
    import torch

    def run(length: int, steps: int) -> tuple[float, float, float]:
        torch.manual_seed(0)
        model = ref.AttnSeq2Seq()
        ref.train_copy(model, length, steps=steps, seed=0)
        src, tgt_in = ref.copy_batch(1000, length, torch.Generator().manual_seed(1234))
        model.eval()
        with torch.no_grad():
            forced = (model(src, tgt_in).argmax(-1) == src).float().mean().item()
            free = model.generate(src, length)
        return forced, (free == src).float().mean().item(), (free == src).all(dim=1).float().mean().item()

    rows = ["| sequence length | teacher-forced acc | free-running acc | whole sequence exact |", "| ---: | ---: | ---: | ---: |"]
    for length in (4, 8, 16, 32):
        forced, free, exact = run(length, 2500)
        rows.append(f"| {length} | {forced:.3f} | {free:.3f} | {exact:.3f} |")
    short = {length: run(length, steps)[1] for length, steps in ((4, 600), (8, 600), (16, 700))}
    return {
        "seq2seq_reference_table": "\n".join(rows),
        "seq2seq_short_runs": f"{short[4]:.3f}, {short[8]:.3f} and {short[16]:.3f}",
    }
