"""TinyCausalLM keeps its positional table as PyTorch's own tutorial does: a persistent buffer ``pe`` of shape (max_len, 1, d_model)

pytorch/examples' word_language_model (``PositionalEncoding``) and the "Language modeling with
nn.Transformer" tutorial register ``pe`` with shape (max_len, 1, d_model) (sequence first) and add
``pe[:T]`` to a (T, B, d) input; with the contract's batch-first input the same table is added as
``pe[:T, 0]``. The contract allows any of the usual layouts, persistent or not.
"""


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def __init__(self, vocab_size, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64):
        super().__init__(vocab_size, d_model, n_heads, d_ff, n_layers, max_len)
        table = self.positions.clone()
        del self.positions
        self.register_buffer("pe", table.unsqueeze(1))  # (max_len, 1, d_model), persistent

    def forward(self, tokens):
        T = tokens.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")
        blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # noqa: F821
        x = self.embedding(tokens) * math.sqrt(self.d_model)  # noqa: F821
        x = x + self.pe[:T, 0].to(x.dtype)
        for block in self.blocks:
            x = block(x, mask=blocked)
        return self.head(self.norm(x))
