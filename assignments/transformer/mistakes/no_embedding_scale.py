"""Embeddings not multiplied by sqrt(d_model) before the positions are added.

Your model adds the positional table to embedding(tokens) directly. The contract (and the course's
model) scales the embeddings first: x = embedding(tokens) * sqrt(d_model) + PE[:T], so that token
identity is not swamped by the positional signal, whose entries are of size 1.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_lm_matches_reference"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def forward(self, tokens):
        T = tokens.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")
        blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
        x = self.embedding(tokens) + self.positions[:T].to(self.embedding.weight.dtype)
        for block in self.blocks:
            x = block(x, mask=blocked)
        return self.head(self.norm(x))
