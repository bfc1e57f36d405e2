"""plain Python loops: the filters row by row, the cache as lists of per-position tensors, the prompt fed one token at a time."""


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0 or (top_k is not None and top_k < 1) or (top_p is not None and not 0 < top_p <= 1):
        raise ValueError("need temperature >= 0, top_k >= 1, 0 < top_p <= 1")
    rows = []
    for row in logits:
        values = row.tolist()
        V = len(values)
        if temperature == 0:
            best = max(range(V), key=lambda i: (values[i], -i))
            rows.append([1.0 if i == best else 0.0 for i in range(V)])
            continue
        m = max(values)
        e = [math.exp((x - m) / temperature) for x in values]
        p = [x / sum(e) for x in e]
        order = sorted(range(V), key=lambda i: -p[i])
        if top_k is not None:
            kept = set(order[:top_k])
            p = [p[i] if i in kept else 0.0 for i in range(V)]
            p = [x / sum(p) for x in p]
        if top_p is not None:
            order = sorted(range(V), key=lambda i: -p[i])
            kept, total = set(), 0.0
            for i in order:
                if total < top_p:
                    kept.add(i)
                total += p[i]
            p = [p[i] if i in kept else 0.0 for i in range(V)]
            p = [x / sum(p) for x in p]
        rows.append(p)
    return torch.tensor(rows, dtype=logits.dtype)


def causal_mask(n_q, n_k):
    mask = torch.zeros(n_q, n_k, dtype=torch.bool)
    for i in range(n_q):
        for j in range(n_k):
            mask[i, j] = j > n_k - n_q + i
    return mask


class KVCache:
    def __init__(self, n_layers, max_len):
        self.max_len = max_len
        self._k = [[] for _ in range(n_layers)]
        self._v = [[] for _ in range(n_layers)]

    @property
    def keys(self):
        return [torch.stack(ks, dim=1) if ks else None for ks in self._k]

    @property
    def values(self):
        return [torch.stack(vs, dim=1) if vs else None for vs in self._v]

    def __len__(self):
        return len(self._k[0])

    def update(self, layer, k, v):
        if len(self._k[layer]) + k.shape[1] > self.max_len:
            raise ValueError(f"more than max_len={self.max_len} positions")
        for t in range(k.shape[1]):
            self._k[layer].append(k[:, t])
            self._v[layer].append(v[:, t])
        return torch.stack(self._k[layer], dim=1), torch.stack(self._v[layer], dim=1)


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    B, T0 = prompt.shape
    if T0 + n_new > params["positions"].shape[0]:
        raise ValueError("prompt + n_new is longer than max_len")
    tokens = prompt.clone()
    steps = []
    cache = KVCache(n_layers_of(params), params["positions"].shape[0]) if use_cache else None
    with torch.no_grad():
        if use_cache:
            for t in range(T0 - 1):  # the prompt, one position at a time
                forward(params, prompt[:, t:t + 1], cache)
        for _ in range(n_new):
            if use_cache:
                last = forward(params, tokens[:, -1:], cache)[:, -1]
            else:
                last = forward(params, tokens)[:, -1]
            steps.append(last)
            nxt = sample_next(last, temperature, top_k, top_p, generator)
            tokens = torch.cat([tokens, nxt[:, None].to(tokens.dtype)], dim=1)
    if not steps:
        return tokens, params["head"].new_zeros(B, 0, params["head"].shape[1])
    return tokens, torch.stack(steps, dim=1)
