"""Transformer language models on token ids: BERT-base (encoder) and GPT-2 small (decoder).

Activations are kept 2-D, (batch * seq, hidden), as the dense layers see them; attention
reshapes to (batch, heads, seq, head_dim). Published configurations are the defaults.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import chipsim as cs
from chipsim.models.layers import attention, layer_norm, linear
from chipsim.models.params import Params


def _embed(p: Params, ids: Any, name: str, vocab: int, hidden: int) -> Any:
    table = p.get(name, (vocab, hidden), "embedding")
    return cs.ops.reshape(cs.ops.gather(table, ids), (-1, hidden)), table


def _positions(p: Params, name: str, max_positions: int, hidden: int, seq: int, batch: int):
    table = p.get(name, (max_positions, hidden), "embedding")
    pos = cs.ops.slice(table, (0,), (seq,))
    return (
        pos
        if batch == 1
        else cs.ops.reshape(cs.ops.broadcast_to(pos, (batch, seq, hidden)), (-1, hidden))
    )


def bert_forward(
    p: Params,
    ids: Any,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int = 3072,
    vocab: int = 30522,
    max_positions: int = 512,
    type_vocab: int = 2,
) -> Any:
    """BERT-base (Devlin et al. 2019) with its pooler: returns (sequence output, pooled)."""
    batch, seq = ids.shape
    x, _ = _embed(p, ids, "embeddings.word", vocab, hidden)
    x = x + _positions(p, "embeddings.position", max_positions, hidden, seq, batch)
    types = p.get("embeddings.token_type", (type_vocab, hidden), "embedding")
    x = x + cs.ops.slice(types, (0,), (1,))  # every token of segment 0
    x = layer_norm(p, "embeddings.norm", x, 1e-12)
    for i in range(layers):
        n = f"layer{i}"
        q, k, v = (linear(p, f"{n}.{w}", x, hidden) for w in ("query", "key", "value"))
        a = linear(p, f"{n}.attn_out", attention(q, k, v, batch, seq, heads), hidden)
        x = layer_norm(p, f"{n}.attn_norm", x + a, 1e-12)
        h = linear(p, f"{n}.out", cs.ops.gelu_erf(linear(p, f"{n}.inter", x, intermediate)), hidden)
        x = layer_norm(p, f"{n}.out_norm", x + h, 1e-12)
    tokens = cs.ops.reshape(x, (batch, seq, hidden))
    first = cs.ops.reshape(cs.ops.slice(tokens, (0, 0), (batch, 1)), (batch, hidden))
    pooled = cs.ops.tanh(linear(p, "pooler", first, hidden))
    return x, pooled


def causal_mask(seq: int) -> np.ndarray:
    """0 where a token may attend (itself and earlier), a large negative number elsewhere."""
    return np.triu(np.full((seq, seq), -1e9, np.float32), k=1)


def gpt2_forward(
    p: Params,
    ids: Any,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    vocab: int = 50257,
    max_positions: int = 1024,
) -> Any:
    """GPT-2 small (Radford et al. 2019): pre-norm decoder blocks, logits from the tied
    token embedding."""
    batch, seq = ids.shape
    x, wte = _embed(p, ids, "wte", vocab, hidden)
    x = x + _positions(p, "wpe", max_positions, hidden, seq, batch)
    mask = p.buffer(f"causal_mask_{seq}", causal_mask(seq))
    for i in range(layers):
        n = f"h{i}"
        qkv = linear(p, f"{n}.attn", layer_norm(p, f"{n}.ln_1", x, 1e-5), 3 * hidden)
        q, k, v = (
            cs.ops.slice(qkv, (0, j * hidden), (batch * seq, (j + 1) * hidden)) for j in range(3)
        )
        x = x + linear(p, f"{n}.attn_proj", attention(q, k, v, batch, seq, heads, mask), hidden)
        h = cs.ops.gelu(linear(p, f"{n}.fc", layer_norm(p, f"{n}.ln_2", x, 1e-5), 4 * hidden))
        x = x + linear(p, f"{n}.mlp_proj", h, hidden)
    x = layer_norm(p, "ln_f", x, 1e-5)
    return cs.ops.matmul(
        x, cs.ops.transpose(wte)
    )  # tied: the output layer is the embedding, transposed
