"""Generation in train mode: model.eval() missing (torch.no_grad() alone keeps train mode).

Your generate runs without gradients but leaves the model in the mode it was handed over in,
usually train mode. torch.no_grad() only stops the graph; it is model.eval() that switches
dropout-like layers to inference (nanoGPT's generate leaves that call to its caller; here
generate owns it). Call model.eval() first, then decode inside torch.no_grad().
"""
CAUGHT_BY = [
    "hidden/test_generate.py::test_generate_matches_reference",
    "hidden/test_generate.py::test_generate_eval_mode",
]
PATCH = [('model.eval()\ntokens = prompt\n', 'tokens = prompt\n')]
