"""TinyCausalLM keeps a float32-built positional table as a persistent buffer (the course's lab script; the contract allows it)

The table is computed in float32 (``exp(arange * -ln(10000) / d)``, as most tutorials write it) and
registered with ``register_buffer("positions", pe)``, so it sits in ``state_dict()`` and turns float64
with ``.double()``. The grader loads the reference's parameters around the buffer and allows for the
float32 table in float64 comparisons.
"""


def _lab_positions(max_len, d_model):
    position = torch.arange(max_len).unsqueeze(1).float()  # noqa: F821
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))  # noqa: F821
    pe = torch.zeros(max_len, d_model)  # noqa: F821
    pe[:, 0::2] = torch.sin(position * div_term)  # noqa: F821
    pe[:, 1::2] = torch.cos(position * div_term)  # noqa: F821
    return pe


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, max_len)
        del self.positions
        self.register_buffer("positions", _lab_positions(max_len, d_model))
