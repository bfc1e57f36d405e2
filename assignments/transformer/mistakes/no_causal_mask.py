"""No causal mask in the language model: every position reads the future.

Your TinyCausalLM runs its blocks without the causal mask, so position t attends to tokens
after t. In teacher-forced training the whole sequence is given at once, so the model can
simply read the next token instead of predicting it, and it fails at generation time where the
future does not exist yet. Build blocked = triu(ones(T, T), diagonal=1) (True = blocked) and pass
it to every block. The course's check: change a suffix, earlier logits must not move.
"""
CAUGHT_BY = ["hidden/test_lm.py::test_causality", "hidden/test_lm.py::test_lm_matches_reference"]


class TinyCausalLM(TinyCausalLM):  # noqa: F821
    def forward(self, tokens):
        T = tokens.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")
        x = self.embedding(tokens) * math.sqrt(self.d_model) + self.positions[:T].to(self.embedding.weight.dtype)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
