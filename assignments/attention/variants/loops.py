"""Python loops: softmax slice by slice and attention query row by query row.

Correct but slow; the contract keeps test sizes small enough for it.
"""


def softmax(x, dim=-1):
    moved = x.movedim(dim, -1)                           # (..., n) the softmax axis last
    flat = moved.reshape(-1, moved.shape[-1])            # (rows, n)
    rows = []
    for row in flat:                                     # row: (n,)
        if bool(torch.isneginf(row).all()):
            rows.append(torch.zeros_like(row))
            continue
        e = torch.exp(row - row.max())                   # (n,)
        rows.append(e / e.sum())
    out = torch.stack(rows) if rows else flat.clone()    # (rows, n)
    return out.reshape(moved.shape).movedim(-1, dim)


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n_q, n_k = q.shape[-2], k.shape[-2]
    q = q.expand(*lead, *q.shape[-2:]).reshape(-1, n_q, q.shape[-1])     # (N, n_q, d_k)
    k = k.expand(*lead, *k.shape[-2:]).reshape(-1, n_k, k.shape[-1])     # (N, n_k, d_k)
    v = v.expand(*lead, *v.shape[-2:]).reshape(-1, n_k, v.shape[-1])     # (N, n_k, d_v)
    if mask is not None:
        mask = mask.expand(*lead, n_q, n_k).reshape(-1, n_q, n_k)        # (N, n_q, n_k)
    outs, ws = [], []
    for b in range(q.shape[0]):
        out_rows, w_rows = [], []
        for i in range(n_q):
            s = (k[b] @ q[b, i]) / math.sqrt(q.shape[-1])                # (n_k,)
            if mask is not None:
                s = s.masked_fill(mask[b, i], float("-inf"))
            w = softmax(s)                                               # (n_k,)
            w_rows.append(w)
            out_rows.append(w @ v[b])                                    # (d_v,)
        ws.append(torch.stack(w_rows))
        outs.append(torch.stack(out_rows))
    output = torch.stack(outs).reshape(*lead, n_q, v.shape[-1])          # (..., n_q, d_v)
    weights = torch.stack(ws).reshape(*lead, n_q, n_k)                   # (..., n_q, n_k)
    return output, weights
