"""generate starts from token 0 instead of BOS.

Your free-running decoder's first input is the digit 0, not BOS = 10. In training the first
decoder input is always BOS (tgt_in[:, 0]); at generation time it must be the same token, or
the first step sees an input it was never trained on.
"""
CAUGHT_BY = ["hidden/test_model.py::test_generate_matches_reference"]
PATCH = [('tok = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)\n',
  'tok = torch.zeros(src.shape[0], dtype=torch.long)  # should be BOS\n')]
