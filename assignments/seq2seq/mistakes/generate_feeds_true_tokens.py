"""generate feeds the true source digits instead of its own predictions.

Your generate is still teacher-forced: it feeds src[:, t - 1] as the next input. Free running
means the decoder reads its OWN previous prediction (the argmax of the logits), which is how it
runs at test time, when the true answer is unknown; its mistakes then compound.
"""
CAUGHT_BY = ["hidden/test_model.py::test_generate_matches_reference"]
PATCH = [('tok = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)\n',
  'tok = torch.full((src.shape[0],), BOS, dtype=torch.long)\n'),
 ('for _ in range(length):\n', 'for t in range(length):\n'),
 ('tok = logits.argmax(dim=-1)\ntokens.append(tok)\n',
  'tokens.append(logits.argmax(dim=-1))\ntok = src[:, t]  # the true digit, not the prediction\n')]
