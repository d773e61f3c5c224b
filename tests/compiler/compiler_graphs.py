"""The graphs every compiler test runs: name -> (graph, example input arrays).

Small sizes keep the whole suite fast; each graph exercises a different path of the
compiler (fusion groups, spills, registers, broadcasting, reductions, f16, control flow).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import chipsim as cs
from chipsim.ir import Graph, GraphBuilder, f16, f32
from chipsim.testing.graphs import random_graph

RANDOM_SEEDS = tuple(range(12))


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _w(b: GraphBuilder, rng: np.random.Generator, *shape: int, dtype=np.float32):
    scale = 1.0 / np.sqrt(shape[0]) if len(shape) > 1 else 0.1
    return b.const((rng.normal(size=shape) * scale).astype(dtype))


def add_mul(n: int = 1024) -> Graph:
    """y = (x + 1) * 2"""
    b = GraphBuilder("add_mul")
    x = b.input((n,), f32, "x")
    return b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))


def linear_relu(rank: int = 1, n: int = 64, k: int = 48, cols: int = 8) -> Graph:
    """y = relu(W @ x + b), x a vector (rank 1) or a matrix of ``cols`` columns (rank 2)."""
    rng = _rng(1)
    b = GraphBuilder(f"linear_relu_rank{rank}")
    x = b.input((k,) if rank == 1 else (k, cols), f32, "x")
    w = _w(b, rng, n, k)
    bias = _w(b, rng, n) if rank == 1 else _w(b, rng, n, 1)
    return b.build(b.op("relu", b.op("add", b.op("matmul", w, x), bias)))


def mlp(rows: int = 16, dims: tuple[int, ...] = (32, 64, 64, 16)) -> Graph:
    """Dense layers relu(h @ W + b), the last one without activation."""
    rng = _rng(2)
    b = GraphBuilder("mlp")
    h = b.input((rows, dims[0]), f32, "x")
    for i, (din, dout) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        h = b.op("add", b.op("matmul", h, _w(b, rng, din, dout)), _w(b, rng, dout))
        if i < len(dims) - 2:
            h = b.op("relu", h)
    return b.build(h)


def attention_head(seq: int = 16, d: int = 32) -> Graph:
    """softmax(q @ k.T / sqrt(d)) @ v with q, k, v projections of x."""
    rng = _rng(3)
    b = GraphBuilder("attention_head")
    x = b.input((seq, d), f32, "x")
    q, k, v = (b.op("matmul", x, _w(b, rng, d, d)) for _ in range(3))
    s = b.op("mul", b.op("matmul", q, b.op("transpose", k)), b.const(float(1 / np.sqrt(d))))
    return b.build(b.op("matmul", b.op("softmax", s, axis=-1), v))


def layernorm_gelu_block(rows: int = 16, d: int = 32, ff: int = 64) -> Graph:
    """h = x + W2 @ gelu(W1 @ layernorm(x) + b1) + b2 (row-major: x @ W)."""
    rng = _rng(4)
    b = GraphBuilder("ln_gelu_block")
    x = b.input((rows, d), f32, "x")
    h = b.op("layernorm", x)
    h = b.op("gelu", b.op("add", b.op("matmul", h, _w(b, rng, d, ff)), _w(b, rng, ff)))
    h = b.op("add", b.op("matmul", h, _w(b, rng, ff, d)), _w(b, rng, d))
    return b.build(b.op("add", x, h))


def small_cnn(size: int = 8, channels: tuple[int, ...] = (3, 8, 8)) -> Graph:
    """conv2d + bias + relu layers, global mean pool."""
    rng = _rng(5)
    b = GraphBuilder("small_cnn")
    t = b.input((1, size, size, channels[0]), f32, "image")
    for cin, cout in zip(channels[:-1], channels[1:], strict=True):
        t = b.op("conv2d", t, _w(b, rng, 3, 3, cin, cout), padding="same")
        t = b.op("relu", b.op("add", t, _w(b, rng, cout)))
    return b.build(b.op("mean", t, axes=(1, 2)))


def diamond(n: int = 256) -> Graph:
    """t = exp(x); y = t * 2 + relu(t): one value with two users."""
    b = GraphBuilder("diamond")
    t = b.op("exp", b.input((n,), f32, "x"))
    return b.build(b.op("add", b.op("mul", t, b.const(2.0)), b.op("relu", t)))


def where_graph() -> Graph:
    """y = where(x > 0, x * 2, -x): traced from Python with ``chipsim.ops.where``."""
    return cs.trace(lambda x: cs.ops.where(x > 0, x * 2.0, -x), np.zeros((8, 16), np.float32))


def cond_graph() -> Graph:
    """y = cond(sum(x) > 0, exp, tanh)(x): tracing keeps both branches."""

    def fn(x):
        return cs.cond(x.sum() > 0, lambda t: t.exp(), lambda t: t.tanh(), x)

    return cs.trace(fn, np.zeros((4, 32), np.float32))


def f16_chain(n: int = 512) -> Graph:
    """An f16 elementwise chain: gelu(x * 0.5 + y)."""
    b = GraphBuilder("f16_chain")
    x, y = b.input((n,), f16, "x"), b.input((n,), f16, "y")
    return b.build(b.op("gelu", b.op("add", b.op("mul", x, b.const(np.float16(0.5))), y)))


def f16_linear(rows: int = 8, k: int = 32, n: int = 16) -> Graph:
    """An f16 dense layer: relu(x @ W + b)."""
    rng = _rng(6)
    b = GraphBuilder("f16_linear")
    x = b.input((rows, k), f16, "x")
    w, bias = _w(b, rng, k, n, dtype=np.float16), _w(b, rng, n, dtype=np.float16)
    return b.build(b.op("relu", b.op("add", b.op("matmul", x, w), bias)))


BUILDERS: dict[str, Callable[[], Graph]] = {
    "add_mul": add_mul,
    "linear_relu_rank1": lambda: linear_relu(1),
    "linear_relu_rank2": lambda: linear_relu(2),
    "mlp": mlp,
    "attention_head": attention_head,
    "ln_gelu_block": layernorm_gelu_block,
    "small_cnn": small_cnn,
    "diamond": diamond,
    "where": where_graph,
    "cond": cond_graph,
    "f16_chain": f16_chain,
    "f16_linear": f16_linear,
    **{f"random{s}": (lambda s=s: random_graph(s)) for s in RANDOM_SEEDS},
}


def example_inputs(graph: Graph, seed: int = 0) -> list[np.ndarray]:
    """Seeded random inputs of the graph's shapes and dtypes (both signs, moderate size)."""
    rng = _rng(seed)
    return [rng.normal(size=v.shape).astype(v.dtype.numpy) for v in graph.inputs]


def output_scale(values: np.ndarray) -> float:
    """The magnitude that absolute tolerances scale with: the largest finite value (at least 1).

    An output may hold ``inf`` (e.g. ``exp`` of a large input) where both sides agree; taking
    it into the scale would make the tolerance infinite and the comparison vacuous.
    """
    finite = np.abs(np.asarray(values, np.float64))
    finite = finite[np.isfinite(finite)]
    return max(1.0, float(finite.max())) if finite.size else 1.0


def tolerance(graph: Graph) -> dict[str, float]:
    """f16 results carry ~3 decimal digits; f32 ones differ only by summation order."""
    low = any(v.dtype == f16 for v in (*graph.inputs, *graph.outputs))
    return {"rtol": 2e-2, "atol": 2e-2} if low else {"rtol": 1e-4, "atol": 1e-5}
