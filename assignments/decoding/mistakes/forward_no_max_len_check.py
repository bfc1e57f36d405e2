"""forward does not check the positions table: tokens past max_len fail with a shape error, not ValueError.

Your forward ran on more positions than the table holds: adding params["positions"][start:start + T] (only the
rows that exist) to T embeddings is a shape mismatch, a RuntimeError that says nothing about max_len. Check
start + T against params["positions"].shape[0] first and raise ValueError saying max_len.
"""
CAUGHT_BY = ["hidden/test_cache.py::test_forward_past_max_len_raises"]
PATCH = [('if start + T > max_len:\n'
  '    raise ValueError(f"positions {start}..{start + T - 1} do not fit max_len={max_len}")\n',
  '')]
