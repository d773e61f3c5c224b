"""Small named graphs shared by the fusion tests (built with GraphBuilder)."""

from __future__ import annotations

import numpy as np

from chipsim.ir import Graph, GraphBuilder, f32

RNG = np.random.default_rng(0)


def weight(b: GraphBuilder, *shape: int):
    return b.const(RNG.normal(size=shape).astype(np.float32))


def add_mul() -> Graph:
    """y = (x + 1) * 2"""
    b = GraphBuilder()
    x = b.input((4, 8), f32)
    return b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))


def dense(b: GraphBuilder, x, n: int, act: str | None = "relu"):
    """relu(x @ W + b)"""
    y = b.op("add", b.op("matmul", x, weight(b, x.shape[-1], n)), weight(b, n))
    return b.op(act, y) if act else y


def linear_relu() -> Graph:
    b = GraphBuilder()
    return b.build(dense(b, b.input((8, 16), f32), 32))


def attention(b: GraphBuilder | None = None, q=None, k=None, v=None) -> Graph:
    """softmax(q @ k.T * 0.25) @ v"""
    b = b or GraphBuilder()
    q = q if q is not None else b.input((8, 16), f32)
    k = k if k is not None else b.input((8, 16), f32)
    v = v if v is not None else b.input((8, 16), f32)
    s = b.op("mul", b.op("matmul", q, b.op("transpose", k)), b.const(0.25))
    return b.op("matmul", b.op("softmax", s, axis=-1), v)


def attention_graph() -> Graph:
    b = GraphBuilder()
    return b.build(attention(b))


def elementwise_diamond() -> Graph:
    """t = exp(x); y = (t * 2) + relu(t)"""
    b = GraphBuilder()
    t = b.op("exp", b.input((4, 8), f32))
    return b.build(b.op("add", b.op("mul", t, b.const(2.0)), b.op("relu", t)))


def matmul_diamond() -> Graph:
    """h = relu(x); y = h @ W1 + h @ W2: h has two expensive users."""
    b = GraphBuilder()
    h = b.op("relu", b.input((8, 16), f32))
    a = b.op("matmul", h, weight(b, 16, 16))
    c = b.op("matmul", h, weight(b, 16, 16))
    return b.build(b.op("add", a, c))


def two_matmuls() -> Graph:
    b = GraphBuilder()
    x = b.input((8, 16), f32)
    return b.build(b.op("matmul", b.op("matmul", x, weight(b, 16, 16)), weight(b, 16, 8)))


def layernorm_matmul() -> Graph:
    b = GraphBuilder()
    x = b.input((8, 16), f32)
    return b.build(dense(b, b.op("layernorm", x), 32, act="gelu"))


def mlp(layers: int = 3) -> Graph:
    b = GraphBuilder()
    h = b.input((8, 16), f32)
    for i in range(layers):
        h = dense(b, h, 16, act="relu" if i < layers - 1 else None)
    return b.build(h)


def transformer_block() -> Graph:
    """Pre-norm block: x + attn(ln(x)); then h + mlp(ln(h))."""
    b = GraphBuilder()
    x = b.input((8, 16), f32)
    n1 = b.op("layernorm", x, weight(b, 16), weight(b, 16))
    q = b.op("matmul", n1, weight(b, 16, 16))
    k = b.op("matmul", n1, weight(b, 16, 16))
    v = b.op("matmul", n1, weight(b, 16, 16))
    a = attention(b, q, k, v)
    h = b.op("add", x, b.op("matmul", a, weight(b, 16, 16)))
    n2 = b.op("layernorm", h, weight(b, 16), weight(b, 16))
    m = dense(b, dense(b, n2, 64, act="gelu"), 16, act=None)
    return b.build(b.op("add", h, m))


def small_cnn() -> Graph:
    """Two conv+bias+relu layers, global average pool, a classifier matmul."""
    b = GraphBuilder()
    h = b.input((1, 8, 8, 3), f32)
    for cin, cout in ((3, 8), (8, 8)):
        h = b.op("conv2d", h, weight(b, 3, 3, cin, cout), padding="same")
        h = b.op("relu", b.op("add", h, weight(b, cout)))
    pooled = b.op("reshape", b.op("mean", h, axes=(1, 2)), shape=(1, 8))
    return b.build(dense(b, pooled, 10, act=None))
