"""top-p keeps a token whose preceding mass equals top_p exactly.

Your nucleus keeps one token too many when the mass of the tokens before a token is exactly top_p: it keeps a token
while that mass is at most top_p (`before <= top_p`, or, as in the classic top_k_top_p_filtering, removes where the
cumulative mass is `> top_p` and shifts the mask right by one). The nucleus is the SMALLEST set whose mass reaches
top_p: once the tokens before reach top_p, it is complete. Keep a token when the mass before it is strictly below
top_p (`cumsum - p < top_p`).
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_top_p_exact_threshold"]
PATCH = [("keep_sorted = before < top_p\n", "keep_sorted = before <= top_p\n")]
