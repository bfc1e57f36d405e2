"""No check of the sequence length against max_len.

Your forward pass does not raise ValueError when T > max_len; it either crashes with a shape error
deep inside (the positional table has only max_len rows) or silently computes positions it was
never built for. Check the length first and raise a ValueError that says what went wrong.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_too_long_raises"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def forward(self, tokens):
        T = tokens.shape[1]
        blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
        x = self.embedding(tokens) * math.sqrt(self.d_model) + self.positions[:T].to(self.embedding.weight.dtype)
        for block in self.blocks:
            x = block(x, mask=blocked)
        return self.head(self.norm(x))
