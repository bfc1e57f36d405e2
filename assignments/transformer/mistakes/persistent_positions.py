"""Positional table registered as a persistent buffer: it appears in state_dict().

Your TinyCausalLM registers the sinusoidal table with register_buffer(name, table), which puts it
in state_dict(). It is not learnt, and a checkpoint that stores it cannot be loaded with
strict=True into a model of the same size with another max_len, nor into the contract's model.
Use register_buffer(name, table, persistent=False) or compute the table in forward.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_state_dict_keys"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, max_len)
        del self.positions
        self.register_buffer("positions", sinusoidal_positions(max_len, d_model))  # noqa: F821
