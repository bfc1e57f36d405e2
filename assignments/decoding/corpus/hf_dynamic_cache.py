"""Hugging Face transformers' DynamicCache: per-layer key_cache / value_cache lists grown by torch.cat along the sequence axis in update(), get_seq_length() from layer 0; the cached causal mask as a triu with the past length in its diagonal offset

Source: huggingface/transformers, src/transformers/cache_utils.py, class ``DynamicCache``
(``update``, ``get_seq_length``) and the causal-mask helper of modeling_attn_mask_utils.py
``AttentionMaskConverter._make_causal_mask`` (``torch.full((tgt_len, tgt_len), min)``,
``masked_fill_(mask_cond < (mask_cond + 1).view(...), 0)``, then zeros for the
``past_key_values_length`` columns in front) (Apache-2.0 licence). Written after its
formulation, not copied (the search tools' terms keep public code out of this repository's
commits): the first update of a layer stores the given keys and values, later ones concatenate
along the sequence axis and the updated tensors are returned; the mask lets each new query see
every past position and the new positions up to its own.
Changes for the contract: the cache's lists are named ``keys``/``values`` (HF: key_cache /
value_cache) and are sized for n_layers at creation with None (HF appends layers as they come);
the sequence axis is 1 of (B, t, d) (HF's is -2 of (B, heads, t, d_head)); ``update(layer, k, v)``
takes the layer first (HF: ``update(key_states, value_states, layer_idx)``); ``__len__`` is
``get_seq_length()``; the contract's max_len ValueError is checked before storing (HF's
DynamicCache has no limit, its StaticCache has one); the mask is boolean with True = blocked
(HF builds an additive float mask with the dtype's minimum), built directly as
``ones(n_q, n_k).triu(diagonal=n_k - n_q + 1)`` (past length + 1), with the contract's
ValueError when n_q > n_k. Sampling, forward and generate come from the reference.
"""
BUG = ("if self.get_seq_length(layer) + key_states.shape[1] > self.max_len:", "if False:")  # no limit
BUG_NAMES = ["cache_no_max_len_check"]


def causal_mask(n_q, n_k):
    if n_q > n_k:
        raise ValueError(f"{n_q} new positions cannot follow a past of {n_k - n_q} positions")
    past_key_values_length = n_k - n_q
    return torch.ones(n_q, n_k, dtype=torch.bool).triu(diagonal=past_key_values_length + 1)  # noqa: F821


class KVCache:
    def __init__(self, n_layers, max_len):
        self.max_len = max_len
        self.keys = [None] * n_layers
        self.values = [None] * n_layers

    def get_seq_length(self, layer_idx=0):
        return 0 if self.keys[layer_idx] is None else self.keys[layer_idx].shape[1]

    def __len__(self):
        return self.get_seq_length()

    def update(self, layer, key_states, value_states):
        if self.get_seq_length(layer) + key_states.shape[1] > self.max_len:
            raise ValueError(f"the cache holds at most max_len={self.max_len} positions")
        if self.keys[layer] is None:
            self.keys[layer] = key_states
            self.values[layer] = value_states
        else:
            self.keys[layer] = torch.cat([self.keys[layer], key_states], dim=1)  # noqa: F821
            self.values[layer] = torch.cat([self.values[layer], value_states], dim=1)  # noqa: F821
        return self.keys[layer], self.values[layer]
