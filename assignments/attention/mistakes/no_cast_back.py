"""Computes in float64 and forgets to cast back to the input's dtype.

Your attention returns float64 for float32 inputs. Computing inside in float64
is fine, but the output and weights must come back in q's dtype
(`.to(q.dtype)`): the rest of a float32 model would otherwise be silently
promoted to float64.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_output_dtype",
    "public/test_attention_public.py::test_shapes",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'q, k, v = q.double(), k.double(), v.double()\n'
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
