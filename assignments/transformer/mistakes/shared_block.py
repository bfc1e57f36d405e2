"""One block repeated n_layers times instead of n_layers independent blocks.

Your ModuleList holds the same TransformerBlock object n_layers times ([block] * n_layers), so
every layer shares one set of weights: loading a checkpoint writes each layer's weights into the
same tensors and only the last survives. Build a new TransformerBlock per layer
(nn.ModuleList(TransformerBlock(...) for _ in range(n_layers))). The course's script even warns
that cloned layers start equal and must be initialised independently.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, max_len)
        block = TransformerBlock(d_model, n_heads, d_ff)  # noqa: F821
        self.blocks = nn.ModuleList([block] * n_layers)
