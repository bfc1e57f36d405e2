"""sampling with the global random generator instead of the one given.

Two runs with the same seeded generator drew different tokens once the global random state changed: your draws
ignore `generator` (torch.multinomial(probs, 1) without generator=, or torch.rand without it). Pass
generator=generator to every random call, so a seed fixes the result whatever else used the global generator.
"""
CAUGHT_BY = [
    "public/test_decoding_public.py::test_sample_greedy_and_seeded",
    "hidden/test_sampling.py::test_generator_reproducible",
    "hidden/test_generate.py::test_sampled_cache_equals_recompute",
]
PATCH = [('return torch.multinomial(probs, 1, generator=generator)[:, 0]\n',
  'return torch.multinomial(probs, 1)[:, 0]\n')]
