"""Post-norm block: LayerNorm after each residual sum instead of before each sub-layer.

Your block normalises after the residual sum, x = norm1(x + attn(x)), the ordering of the
2017 paper (post-norm). This assignment's block is pre-norm, as in GPT-2 and
nn.TransformerEncoderLayer(norm_first=True): x = x + attn(norm1(x)), then
x = x + linear2(relu(linear1(norm2(x)))). The two orderings compute different functions and
route gradients differently: pre-norm keeps a clean residual path from the output to the input.
"""
CAUGHT_BY = ["hidden/test_block.py::test_block_matches_torch", "hidden/test_lm.py::test_lm_matches_reference"]
PATCH = [('h = self.norm1(x)\n'
  'x = x + self.self_attn(h, h, h, mask=mask)[0]\n'
  'h = self.linear2(torch.relu(self.linear1(self.norm2(x))))\n'
  'return x + h\n',
  'x = self.norm1(x + self.self_attn(x, x, x, mask=mask)[0])\n'
  'return self.norm2(x + self.linear2(torch.relu(self.linear1(x))))\n')]
