"""a .float() cast in the model (AllenNLP's habit): float32 meets the float64 weights

The tests run the model in float64 (model.double()), so a .float() cast meets float64 weights and torch raises
"mat1 and mat2 must have the same dtype". The formula is right; the cast is the mistake (the traceback shows where it is). Compute in the input's
dtype: no .float() casts, no float32 constants, no torch.FloatTensor.
"""
CAUGHT_BY = [
    "hidden/test_model.py::test_step_matches_reference",
    "hidden/test_model.py::test_forward_matches_reference",
    "hidden/test_model.py::test_generate_matches_reference",
    "hidden/test_train.py::test_train_copy_follows_reference",
]
PATCH = [('logits = self.out(torch.cat([state, context], dim=1))  # (B, V)\n',
  'logits = self.out(torch.cat([state, context], dim=1).float())  # (B, V)\n')]
