"""generate returns the logits after the temperature.

The logits your generate returns are the model's divided by the temperature: the contract asks for the logits
each token was drawn from BEFORE the temperature (the model's output at the last position), so that they are the
same whatever the sampling settings and can be compared with recomputation. Append the step's logits as forward
returned them; sample_next applies the temperature itself.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_sampled_cache_equals_recompute"]
PATCH = [("steps.append(last)\n", "steps.append(last / temperature if temperature > 0 else last)\n")]
