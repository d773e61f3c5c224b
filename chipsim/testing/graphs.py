"""Random small graphs and random valid partitions (seeded) for fusion tests and benchmarks.

``random_graph(seed)`` builds a valid graph of 1..12 ops over 2-D tensors, mixing matmuls
(with weights or with another activation), elementwise and broadcast ops, reductions with
``keepdims`` (so their results broadcast back, as in a hand-written softmax), softmax,
layernorm and transposes. Operands are drawn mostly from recent values, so graphs are chains
with side branches and diamonds. Every op's result is used or is a graph output.

Tensor sides come from ``dims``. The default, :data:`TINY_DIMS` (4, 8, 16), keeps tests fast,
but on such tensors every kernel costs mostly its launch. :data:`REALISTIC_DIMS` (32..256)
gives tensors of 4 KiB to 256 KiB, where DRAM traffic and compute matter as they do in real
layers; the fusion-quality benchmark uses them.

``random_partition(graph, seed)`` draws a random valid partition of a graph.

Example:
    >>> g = random_graph(7, max_ops=6)
    >>> 1 <= sum(not n.is_constant for n in g.nodes) <= 6
    True
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from chipsim.errors import ChipsimError
from chipsim.ir.graph import Graph, GraphBuilder, Value
from chipsim.passes.fusion.partition import Partition, validate_partition
from chipsim.passes.fusion.reference import no_fusion, topological_groups

UNARY = ("relu", "exp", "tanh", "neg", "sigmoid", "gelu")
BINARY = ("add", "mul", "sub", "maximum")
REDUCE = ("sum", "max", "mean")
KINDS = (
    # kind, weight: how often it is drawn
    ("unary", 4),
    ("scalar", 2),
    ("bias", 2),
    ("binary", 3),
    ("reduce", 2),
    ("softmax", 1),
    ("layernorm", 1),
    ("matmul_w", 3),
    ("matmul_xy", 1),
    ("transpose", 1),
)


TINY_DIMS = (4, 8, 16)
REALISTIC_DIMS = (32, 64, 128, 256)


def random_graph(
    seed: int, max_ops: int = 12, min_ops: int = 1, dims: tuple[int, ...] = TINY_DIMS
) -> Graph:
    """A random valid graph with between ``min_ops`` and ``max_ops`` non-constant ops.

    Args:
        seed: the only source of randomness: the same seed gives the same graph.
        max_ops: most non-constant ops.
        min_ops: fewest non-constant ops.
        dims: the tensor sides to draw from (rows, columns, matmul widths).
    """
    rng = np.random.default_rng(seed)
    n_ops = int(rng.integers(min_ops, max_ops + 1))
    b = GraphBuilder(f"random{seed}")
    pool: list[Value] = [b.input((int(rng.choice(dims)), int(rng.choice(dims))))]
    if rng.random() < 0.3:
        pool.append(b.input(pool[0].shape))
    ops = 0
    names = [k for k, _ in KINDS]
    weights = np.array([w for _, w in KINDS], float)
    while ops < n_ops:
        kind = str(rng.choice(names, p=weights / weights.sum()))
        x = _pick(rng, pool)
        made = _make(rng, b, kind, x, pool, budget=n_ops - ops, dims=dims)
        if made is None:
            continue
        value, count = made
        pool.append(value)
        ops += count
    used = {id(v) for n in b.nodes for v in n.inputs}
    outputs = [n.output for n in b.nodes if not n.is_constant and id(n.output) not in used]
    return b.build(*outputs)


def _pick(rng: np.random.Generator, pool: list[Value]) -> Value:
    # favour recent values: chains with occasional branches back to older values
    back = min(len(pool), 1 + int(rng.geometric(0.5)))
    return pool[-back]


def _const(rng: np.random.Generator, b: GraphBuilder, shape: tuple[int, ...]) -> Value:
    return b.const(rng.normal(0.0, 0.5, size=shape).astype(np.float32))


def _make(rng, b: GraphBuilder, kind: str, x: Value, pool: list[Value], budget: int, dims):
    """Add one (or two) ops of ``kind`` reading ``x``; None if it does not fit here."""
    rows, cols = x.shape
    if kind == "unary":
        return b.op(str(rng.choice(UNARY)), x), 1
    if kind == "scalar":
        return b.op(str(rng.choice(("add", "mul"))), x, b.const(float(rng.normal()))), 1
    if kind == "bias":
        return b.op("add", x, _const(rng, b, (cols,))), 1
    if kind == "binary":
        # a partner of a shape that broadcasts with x: same shape, or a row statistic
        partners = [v for v in pool if v is not x and v.shape in ((rows, cols), (rows, 1))]
        if not partners:
            return None
        y = partners[int(rng.integers(len(partners)))]
        return b.op(str(rng.choice(BINARY)), x, y), 1
    if kind == "reduce":
        if cols == 1:
            return None
        return b.op(str(rng.choice(REDUCE)), x, axes=(-1,), keepdims=True), 1
    if kind == "softmax":
        return b.op("softmax", x, axis=-1), 1
    if kind == "layernorm":
        return b.op("layernorm", x), 1
    if kind == "matmul_w":
        n = int(rng.choice(dims))
        return b.op("matmul", x, _const(rng, b, (cols, n))), 1
    if kind == "matmul_xy":
        # x @ y.T for another value y with the same number of columns (attention scores)
        others = [v for v in pool if v.shape[1] == cols]
        if budget < 2:
            return None
        y = others[int(rng.integers(len(others)))]
        return b.op("matmul", x, b.op("transpose", y)), 2
    if kind == "transpose":
        return b.op("transpose", x), 1
    raise ValueError(f"unknown kind {kind!r}")


def random_partition(graph: Graph, seed: int, merges: int | None = None) -> Partition:
    """A random *valid* partition of ``graph``: one kernel per op, then random merges.

    Each of ``merges`` tries (default: twice the number of ops) joins two groups (mostly
    neighbours in the current order) and keeps the result only when it is still a valid
    partition (convex groups, runnable order). Useful to check properties that must hold for
    every partition a learner may return, such as "the compiled program computes what the
    interpreter computes".

    Example:
        >>> g = random_graph(3, max_ops=8)
        >>> validate_partition(g, random_partition(g, seed=1))
    """
    rng = np.random.default_rng(seed)
    groups = [tuple(g) for g in no_fusion(graph).groups]
    for _ in range(2 * len(groups) if merges is None else merges):
        if len(groups) < 2:
            break
        a = int(rng.integers(len(groups) - 1))
        b = a + 1 if rng.random() < 0.7 else int(rng.integers(a + 1, len(groups)))
        merged = [*groups[:a], groups[a] + groups[b], *groups[a + 1 : b], *groups[b + 1 :]]
        try:
            candidate = topological_groups(graph, merged)
            validate_partition(graph, candidate)
        except (ChipsimError, nx.NetworkXUnfeasible):
            continue
        groups = list(candidate.groups)
    return Partition(groups, graph=graph)
