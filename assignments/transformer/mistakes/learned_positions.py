"""A learned positional table: the positions are an nn.Parameter (or nn.Embedding), not the fixed sinusoidal table.

Your TinyCausalLM has a parameter of the shape of a positional table (GPT-2 and Karpathy's lecture
learn one). The contract's table is fixed: sinusoidal, no parameters, so that models of the same
size have exactly the same parameters and load each other's weights. Compute the table, or keep it
with self.register_buffer(...).
"""
CAUGHT_BY = ["hidden/test_lm.py::test_state_dict_keys"]
PATCH = [('self.register_buffer("positions", sinusoidal_positions(max_len, d_model), persistent=False)\n',
  'self.positions = nn.Parameter(sinusoidal_positions(max_len, d_model))\n')]
