"""The layers the published models are made of, written with chipsim's public ops.

Every function takes the model's :class:`~chipsim.models.params.Params` and a name prefix,
and works on eager and traced tensors alike.
"""

from __future__ import annotations

from typing import Any

import chipsim as cs
from chipsim.models.params import Params


def batch_norm(p: Params, name: str, x: Any) -> Any:
    c = x.shape[-1]
    return cs.ops.batch_norm(
        x,
        p.get(f"{name}.weight", (c,), "one"),
        p.get(f"{name}.bias", (c,), "small"),
        p.get(f"{name}.running_mean", (c,), "small"),
        p.get(f"{name}.running_var", (c,), "one"),
    )


def conv_bn(
    p: Params, name: str, x: Any, cout: int, k: int, stride: int = 1, groups: int = 1
) -> Any:
    """Convolution without bias, then batch norm (torchvision's ``Conv2d`` + ``BatchNorm2d``)."""
    cin = x.shape[-1]
    w = p.get(f"{name}.weight", (k, k, cin // groups, cout), fan_in=k * k * cin // groups)
    pad = (k - 1) // 2
    if groups == 1:
        y = cs.ops.conv2d(x, w, stride=stride, padding=pad)
    else:
        y = cs.ops.grouped_conv2d(x, w, stride=stride, padding=pad, groups=groups)
    return batch_norm(p, f"{name}.bn", y)


def linear(p: Params, name: str, x: Any, n: int) -> Any:
    """``x @ W + b`` on 2-D ``x`` (tokens x features)."""
    k = x.shape[-1]
    return cs.ops.matmul(x, p.get(f"{name}.weight", (k, n))) + p.get(f"{name}.bias", (n,), "small")


def layer_norm(p: Params, name: str, x: Any, eps: float) -> Any:
    c = x.shape[-1]
    return cs.ops.layernorm(
        x, p.get(f"{name}.weight", (c,), "one"), p.get(f"{name}.bias", (c,), "small"), eps=eps
    )


def global_avg_pool(x: Any) -> Any:
    """NHWC -> (N, C): the mean over the image."""
    return cs.ops.mean(x, axes=(1, 2))


def attention(q: Any, k: Any, v: Any, batch: int, seq: int, heads: int, mask: Any = None) -> Any:
    """Multi-head scaled dot-product attention on (batch * seq, hidden) projections."""
    hidden = q.shape[-1]
    d = hidden // heads

    def split(t: Any) -> Any:  # (B*S, H*d) -> (B, H, S, d)
        return cs.ops.transpose(cs.ops.reshape(t, (batch, seq, heads, d)), (0, 2, 1, 3))

    scores = cs.ops.matmul(split(q), cs.ops.transpose(split(k), (0, 1, 3, 2))) * (1.0 / d**0.5)
    if mask is not None:
        scores = scores + mask
    ctx = cs.ops.matmul(cs.ops.softmax(scores, axis=-1), split(v))  # (B, H, S, d)
    return cs.ops.reshape(cs.ops.transpose(ctx, (0, 2, 1, 3)), (batch * seq, hidden))
