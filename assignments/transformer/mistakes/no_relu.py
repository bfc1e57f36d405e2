"""Feed-forward network without the ReLU: two linear layers collapse into one.

Your feed-forward sub-layer computes linear2(linear1(norm2(x))) with no non-linearity in between.
Two linear maps in a row are just one linear map, so the block loses the position-wise
non-linear transformation that the feed-forward network is there to provide. Use
linear2(relu(linear1(norm2(x)))).
"""
CAUGHT_BY = ["hidden/test_block.py::test_block_matches_torch", "hidden/test_lm.py::test_lm_matches_reference"]


class TransformerBlock(TransformerBlock):  # noqa: F821
    def forward(self, x, mask=None):
        h = self.norm1(x)
        x = x + self.self_attn(h, h, h, mask=mask)[0]
        return x + self.linear2(self.linear1(self.norm2(x)))
