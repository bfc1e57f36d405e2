"""Positional encoding not added: the model sees a set of tokens, not a sequence.

Your forward pass never adds PE[:T] to the scaled embeddings. Attention by itself is blind to order
(the course's "dog bites man" and "man bites dog" give identical outputs); only the causal mask
gives any order information then. Add the sinusoidal table: x = embedding(tokens) * sqrt(d_model) + PE[:T].
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def forward(self, tokens):
        T = tokens.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")
        blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
        x = self.embedding(tokens) * math.sqrt(self.d_model)
        for block in self.blocks:
            x = block(x, mask=blocked)
        return self.head(self.norm(x))
