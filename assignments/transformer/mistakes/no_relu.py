"""Feed-forward network without the ReLU: two linear layers collapse into one.

Your feed-forward sub-layer computes linear2(linear1(norm2(x))) with no non-linearity in between.
Two linear maps in a row are just one linear map, so the block loses the position-wise
non-linear transformation that the feed-forward network is there to provide. Use
linear2(relu(linear1(norm2(x)))).
"""
CAUGHT_BY = ["hidden/test_block.py::test_block_matches_torch", "hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('h = self.linear2(torch.relu(self.linear1(self.norm2(x))))\nreturn x + h\n',
  'return x + self.linear2(self.linear1(self.norm2(x)))\n')]
