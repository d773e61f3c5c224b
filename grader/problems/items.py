"""The exact-answer families: problems whose answer is a fact, scored item by item.

Part 1 of the fusion notebook classifies ops and pattern pairs (:func:`classify_variant`); part
1 of the memory-planning notebook derives usage records from a graph and a schedule
(:func:`liveness_problem`). The graph families scored in cycles live in
:mod:`~grader.problems.families`, the kernels in :mod:`~grader.problems.kernels`; the parts
that use all of them, in :mod:`~grader.problems.parts`.
"""

from __future__ import annotations

from collections.abc import Callable

from chipsim.ir import Graph, GraphBuilder, f32
from chipsim.ir.ops.registry import PATTERN_NAMES


def classify_items(
    ops: tuple[str, ...], pairs: tuple[tuple[str, str], ...]
) -> Callable[[int], dict]:
    """A fixed set of part 1's items (a visible instance): these ``ops`` and these pattern
    ``pairs``, whatever the seed."""
    return lambda _seed: {"ops": list(ops), "pairs": [list(p) for p in pairs]}


def all_pairs() -> tuple[tuple[str, str], ...]:
    """Every (producer, consumer) pair of pattern classes."""
    return tuple((p, c) for p in PATTERN_NAMES for c in PATTERN_NAMES)


#: The ops part 1 asks about (the notebook names each one's pattern class).
PART1_OPS = tuple(
    "neg exp log sqrt rsqrt tanh sigmoid relu gelu cast add sub mul div maximum minimum gt lt "
    "ge le eq where broadcast_to transpose reshape concat slice sum max mean softmax layernorm "
    "matmul conv2d constant".split()
)


def classify_variant(seed: int) -> dict:
    """Part 1's hidden instance: every op of :data:`PART1_OPS` and every pattern pair, in an
    order drawn by the seed. The answers are fixed facts (an op's pattern, the rule), so the
    hidden instance asks all of them: the score is exact and the same on every draw."""
    import numpy as np

    rng = np.random.default_rng([seed, 0])
    ops = [str(PART1_OPS[i]) for i in rng.permutation(len(PART1_OPS))]
    pairs = all_pairs()
    return {"ops": ops, "pairs": [list(pairs[int(i)]) for i in rng.permutation(len(pairs))]}


def liveness_graph(seed: int, width: int = 16, ops: int | None = None) -> Graph:
    """A small branchy graph without value hints, so record ids are print names (``%3``).

    ``ops``: how many ops (default ``6 + seed % 3``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"live{seed}")
    x = b.input((8, width), f32)
    pool = [x]
    for k in range(6 + seed % 3 if ops is None else ops):
        a = pool[-1 - int(rng.integers(min(len(pool), 3)))]
        if k % 3 == 2:
            y = b.op("add", a, pool[-1])
        elif k % 3 == 1:
            y = b.op("mul", a, b.const(float(k)))
        else:
            y = b.op(str(rng.choice(("relu", "exp", "tanh"))), a)
        pool.append(y)
    return b.build(pool[-1], pool[-3])


def liveness_stratum(seed: int, stratum: int) -> tuple[Graph, list[int]]:
    """Part 1's hidden family: stratum k has ``10 + k`` ops, ties broken either way."""
    return liveness_problem(seed, stratum % 2 == 0, 10 + stratum)


def liveness_problem(
    seed: int, reverse_ties: bool, ops: int | None = None
) -> tuple[Graph, list[int]]:
    """A graph and a schedule (node indices, a topological order) for the liveness part."""
    import networkx as nx

    from chipsim.passes.fusion.partition import node_dag

    g = liveness_graph(seed, ops=ops)
    key = (lambda i: -i) if reverse_ties else (lambda i: i)
    order = list(nx.lexicographical_topological_sort(node_dag(g), key=key))
    return g, order
