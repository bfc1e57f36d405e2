"""The blocks are kept in a Python list, not an nn.ModuleList.

Your TinyCausalLM stores its blocks in a plain list ([TransformerBlock(...) for _ in range(n_layers)]),
so PyTorch never registers them: their weights are missing from parameters() and state_dict(), the
optimiser never trains them, and .double() or .to(device) skip them. Wrap the list:
self.blocks = nn.ModuleList(TransformerBlock(d_model, n_heads, d_ff) for _ in range(n_layers)).
"""
CAUGHT_BY = [
    "hidden/test_lm.py::test_lm_matches_reference",
    "hidden/test_lm.py::test_state_dict_keys",
    "hidden/test_lm.py::test_causality",
    "hidden/test_train.py::test_counting_task",
]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, max_len)
        blocks = list(self.blocks)
        del self.blocks
        self.blocks = blocks
