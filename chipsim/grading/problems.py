"""The pristine problem definitions: part id -> instances built from fixed seeds.

A *part* is one graded test cell of an exercise notebook; its id is the nbgrader ``grade_id``
of that cell (``fusion_chains``). Each part has visible instances (the learner sees and
self-checks them) and hidden ones (only the autograder's copy of the test cell asks for
them). Every instance is rebuilt from its seed whenever it is needed, in whichever process
needs it, so the grader never uses an object that came from a learner's kernel.

Instance kinds (what the learner's function gets, and how the answer is scored):

========== ============================== ===============================================
kind       learner's function             score
========== ============================== ===============================================
classify   ``pattern_of(op)``,            exact: fraction of correct items
           ``may_fuse(producer, consumer)``
fusion     ``fn(graph, chip) -> Partition`` cycles between reference and no fusion
liveness   ``fn(graph, schedule)``          exact: fraction of correct usage records
first_fit  ``fn(records, alignment=64)``    exact: fraction of offsets equal to first fit's
arena      ``fn(records, alignment=64)``    arena bytes between reference and naive planner
plan       ``fn(records, alignment=64)``    cycles of the compiled program (no fusion)
========== ============================== ===============================================

Example:
    >>> part = PARTS["fusion_chains"]
    >>> part.assignment, [i.id for i in part.visible()]
    ('fusion', ['chains_a'])
    >>> part.instance("chains_a").build().name
    'chains0'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chipsim.grading import graphs
from chipsim.ir import Graph, GraphBuilder, f32
from chipsim.passes.memory.instances import (
    mobilenet_v1_records,
    mobilenet_v2_records,
    packed_instance,
    random_records,
)

#: The chip every exercise targets.
CHIP = "edge-npu"
#: Alignment every memory plan uses.
ALIGNMENT = 64


@dataclass(frozen=True, slots=True)
class Instance:
    """One problem instance: an id, its kind, a builder, and whether it is hidden."""

    id: str
    kind: str
    build: Callable[[], Any]
    hidden: bool = False


@dataclass(frozen=True, slots=True)
class Part:
    """One graded part (one nbgrader test cell).

    Attributes:
        id: the test cell's nbgrader ``grade_id``.
        assignment: the nbgrader assignment it belongs to.
        title: a short human title.
        points: the points of the test cell (the notebook's metadata must agree).
        functions: names of the learner's functions the test cell passes to ``submit``.
        forbidden: extra names this part's solution may not use (see :mod:`.static_check`).
        reference: the reference strategies; the best of them sets full credit.
        instances: visible and hidden instances, in scoring order.
    """

    id: str
    assignment: str
    title: str
    points: float
    functions: tuple[str, ...]
    forbidden: tuple[str, ...]
    reference: tuple[str, ...]
    instances: tuple[Instance, ...]

    def visible(self) -> list[Instance]:
        return [i for i in self.instances if not i.hidden]

    def instance(self, instance_id: str) -> Instance:
        for i in self.instances:
            if i.id == instance_id:
                return i
        raise KeyError(f"part {self.id!r} has no instance {instance_id!r}")


# -- exact-answer items ---------------------------------------------------------------------
_PATTERN_NAMES = ("elementwise", "broadcast", "injective", "reduction", "contraction", "opaque")


def _classify(ops: tuple[str, ...], pairs: tuple[tuple[str, str], ...]) -> Callable[[], dict]:
    return lambda: {"ops": list(ops), "pairs": [list(p) for p in pairs]}


def _all_pairs() -> tuple[tuple[str, str], ...]:
    return tuple((p, c) for p in _PATTERN_NAMES for c in _PATTERN_NAMES)


def liveness_graph(seed: int, width: int = 16) -> Graph:
    """A small branchy graph without value hints, so record ids are print names (``%3``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"live{seed}")
    x = b.input((8, width), f32)
    pool = [x]
    for k in range(6 + seed % 3):
        a = pool[-1 - int(rng.integers(min(len(pool), 3)))]
        if k % 3 == 2:
            y = b.op("add", a, pool[-1])
        elif k % 3 == 1:
            y = b.op("mul", a, b.const(float(k)))
        else:
            y = b.op(str(rng.choice(("relu", "exp", "tanh"))), a)
        pool.append(y)
    return b.build(pool[-1], pool[-3])


def liveness_problem(seed: int, reverse_ties: bool) -> tuple[Graph, list[int]]:
    """A graph and a schedule (node indices, a topological order) for the liveness part."""
    import networkx as nx

    from chipsim.passes.fusion.partition import node_dag

    g = liveness_graph(seed)
    key = (lambda i: -i) if reverse_ties else (lambda i: i)
    order = list(nx.lexicographical_topological_sort(node_dag(g), key=key))
    return g, order


# -- the parts -----------------------------------------------------------------------------
def _inst(id: str, kind: str, build: Callable[[], Any], hidden: bool = False) -> Instance:
    return Instance(id, kind, build, hidden)


FUSION_PARTS = (
    Part(
        "fusion_patterns",
        "fusion",
        "pattern classes and the fusion rule",
        2,
        ("pattern_of", "may_fuse"),
        ("get_op", "can_fuse", "op_pattern", "group_pattern", "fusion_round", "OPS"),
        (),
        (
            _inst(
                "items_a",
                "classify",
                _classify(
                    ("exp", "add", "transpose", "sum", "matmul"),
                    (
                        ("elementwise", "elementwise"),
                        ("broadcast", "reduction"),
                        ("contraction", "elementwise"),
                        ("contraction", "contraction"),
                        ("reduction", "reduction"),
                        ("opaque", "elementwise"),
                    ),
                ),
            ),
            _inst(
                "items_hidden",
                "classify",
                _classify(
                    (
                        "relu",
                        "gelu",
                        "mul",
                        "where",
                        "reshape",
                        "slice",
                        "mean",
                        "softmax",
                        "layernorm",
                        "conv2d",
                        "maximum",
                        "concat",
                    ),  # fmt: skip
                    _all_pairs(),
                ),
                hidden=True,
            ),
        ),
    ),
    Part(
        "fusion_chains",
        "fusion",
        "greedy fusion of elementwise chains",
        3,
        ("fuse_chains",),
        (),
        ("elementwise",),
        (
            _inst("chains_a", "fusion", lambda: graphs.chain_graph(0, 256, 256)),
            _inst("chains_h1", "fusion", lambda: graphs.chain_graph(11, 512, 128), True),
            _inst("chains_h2", "fusion", lambda: graphs.chain_graph(12, 256, 384, 4), True),
        ),
    ),
    Part(
        "fusion_epilogue",
        "fusion",
        "epilogue fusion within the SRAM budget",
        3,
        ("fuse_epilogues",),
        (),
        ("epilogue",),
        (
            _inst("dense_small", "fusion", lambda: graphs.epilogue_graph(0, 512, 128, 256)),
            _inst("dense_wide", "fusion", lambda: graphs.epilogue_graph(1, 128, 256, 4096)),
            _inst("dense_h1", "fusion", lambda: graphs.epilogue_graph(4, 256, 128, 384, 3), True),
            _inst("dense_h2", "fusion", lambda: graphs.epilogue_graph(3, 256, 128, 2048), True),
        ),
    ),
    Part(
        "fusion_challenge",
        "fusion",
        "open challenge: a transformer block and a small CNN",
        4,
        ("my_fusion",),
        (),
        ("reference", "reference_window", "elementwise"),
        (
            _inst("transformer", "fusion", lambda: graphs.transformer_graph(0, 128, 64, 256)),
            _inst("cnn", "fusion", lambda: graphs.cnn_graph(0, 16, (3, 16, 32), 8)),
            _inst(
                "transformer_h", "fusion", lambda: graphs.transformer_graph(5, 64, 96, 384), True
            ),
            _inst("cnn_h", "fusion", lambda: graphs.cnn_graph(6, 8, (3, 32, 32), 32), True),
        ),
    ),
)

MEMORY_PARTS = (
    Part(
        "memory_liveness",
        "memory_planning",
        "liveness: usage records from a schedule",
        2,
        ("usage_records",),
        (),
        (),
        (
            _inst("live_a", "liveness", lambda: liveness_problem(0, False)),
            _inst("live_h1", "liveness", lambda: liveness_problem(1, True), True),
            _inst("live_h2", "liveness", lambda: liveness_problem(2, True), True),
        ),
    ),
    Part(
        "memory_first_fit",
        "memory_planning",
        "first-fit offsets",
        2,
        ("first_fit_plan",),
        (),
        (),
        (
            _inst("ff_a", "first_fit", lambda: random_records(8, 1, steps=8, max_size=4096)),
            _inst("ff_h1", "first_fit", lambda: random_records(30, 7, steps=20), True),
            _inst("ff_h2", "first_fit", lambda: mobilenet_v1_records(), True),
        ),
    ),
    Part(
        "memory_greedy",
        "memory_planning",
        "greedy-by-size offsets and the lower bound",
        3,
        ("greedy_plan",),
        (),
        ("greedy_by_size",),
        (
            _inst("mobilenet_v2", "arena", lambda: mobilenet_v2_records()),
            _inst("random_40", "arena", lambda: random_records(40, 3)),
            _inst("mobilenet_v1_h", "arena", lambda: mobilenet_v1_records(), True),
            _inst("random_60_h", "arena", lambda: random_records(60, 9, steps=80), True),
        ),
    ),
    Part(
        "memory_challenge",
        "memory_planning",
        "open challenge: the on-chip scratchpad and tight arenas",
        4,
        ("my_planner",),
        (),
        ("greedy_by_size",),
        (
            _inst("sram_transformer", "plan", lambda: graphs.transformer_graph(2, 128, 128, 512)),
            _inst("packed_40", "arena", lambda: packed_instance(40, seed=2)),
            _inst("sram_chain_h", "plan", lambda: graphs.chain_graph(7, 96, 256, 4), True),
            _inst("packed_60_h", "arena", lambda: packed_instance(60, seed=5), True),
        ),
    ),
)

#: Every part, by id (= the nbgrader grade_id of its test cell).
PARTS: dict[str, Part] = {p.id: p for p in (*FUSION_PARTS, *MEMORY_PARTS)}

#: The assignments and their parts, in notebook order.
ASSIGNMENTS: dict[str, tuple[str, ...]] = {
    "fusion": tuple(p.id for p in FUSION_PARTS),
    "memory_planning": tuple(p.id for p in MEMORY_PARTS),
}


def get_part(part_id: str) -> Part:
    """The part with this id; raises KeyError naming the known ids."""
    if part_id not in PARTS:
        raise KeyError(f"unknown part {part_id!r}; known parts: {', '.join(PARTS)}")
    return PARTS[part_id]
