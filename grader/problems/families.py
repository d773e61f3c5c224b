"""The instance families of the exercises: seeded graphs and records, drawn by strata.

Every family is deterministic: the same seed (and stratum) gives the same problem, weights
included, on every machine. The grader rebuilds them in its own process and never trusts a
problem that came from a learner's kernel. The graphs are the teaching workloads of
:mod:`chipsim.workloads.blocks`, at sizes and with structures drawn from the seed.

Example:
    >>> chain_variant(7, stratum=0).name, [v.shape for v in chain_variant(7, stratum=0).inputs]
    ('chains7', [(128, 128), (128, 128)])
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from chipsim.compiler import compile
from chipsim.ir import Graph
from chipsim.passes.fusion.partition import Partition
from chipsim.workloads.blocks import (
    UNARY,
    chain_graph,
    cnn_graph,
    epilogue_graph,
    transformer_graph,
)

#: The chip every exercise targets (the families are sized against its SRAM).
CHIP = "edge-npu"
#: Alignment every memory plan uses.
ALIGNMENT = 64
#: The memory challenge's reference: the search planner with a fixed budget of work (units
#: of search nodes and placements), so the reference is the same plan on every machine.
SEARCH_EFFORT = 100_000

__all__ = [
    "CHIP", "UNARY", "chain_graph", "cnn_graph", "epilogue_graph", "transformer_graph",
    "chain_variant", "cnn_variant", "epilogue_variant", "mobilenet_variant_records",
    "scratchpad_variant", "tight_records", "tight_variant", "transformer_variant",
    "ALIGNMENT", "SEARCH_EFFORT", "search_plan", "plan_records", "baseline_gap", "compile_with",
    "family_rng", "stratum_row", "stratum_step", "redrawn", "CHALLENGE_GAP", "REACHED",
    "OUTCOME_TRIES", "fusion_gap", "naive_cycles", "reference_partition", "once_per_graph",
]  # fmt: skip


# -- hidden-instance families: a seed picks shapes and structure ---------------------------------
# The grader draws each hidden instance's seed from its secret (:mod:`.hidden`). Each family
# varies the *structure* (op sequence, activations, shapes) with the seed, not only the
# weights: a fusion answer depends on structure, and a family with few structures could be
# solved offline, all of it, with the reference passes.
#
# The k-th hidden instance of a part is drawn from *stratum* k of its family: the dimensions
# that decide how hard an instance is (its size against the SRAM, its depth) follow the
# stratum, the rest follows the seed. Every submission then meets the same spread of sizes,
# and a score moves little with the draw (stratified sampling); without a stratum, a family
# draws everything from the seed.
def family_rng(seed: int, family: int) -> np.random.Generator:
    return np.random.default_rng([seed, family])


def stratum_row(table: tuple, stratum: int | None, rng: np.random.Generator) -> tuple:
    """Row ``stratum`` of ``table`` (cycling), or a random row when there is no stratum."""
    return table[int(rng.integers(len(table))) if stratum is None else stratum % len(table)]


def stratum_step(
    table: tuple, stratum: int | None, steps: tuple[int, ...], rng: np.random.Generator
) -> int:
    """One of ``steps`` for the ``stratum``-th instance of a family whose rows are ``table``:
    the k-th pass over the table takes step k (cycling), so every submission meets each step
    equally often; a random step when there is no stratum. For a dimension whose every value
    changes how an instance behaves (a size against a tile edge), stratifying it as well as
    the row keeps a score from hanging on how many of one kind a draw happened to hold."""
    if stratum is None:
        return int(rng.choice(steps))
    return steps[(stratum // len(table)) % len(steps)]


#: The strata of the families: the dimensions that decide how an instance behaves. A chain
#: stratum also fixes the answer to the question its part asks (does one kernel for every op
#: beat one kernel per op?): half the strata say yes, half no, whatever the seed drew.
CHAIN_STRATA = ((128, 128, False), (192, 192, True), (256, 256, False), (320, 256, True),
                (384, 320, True), (448, 384, False))  # fmt: skip
#: One kernel "pays" when it takes at most this fraction of the per-op cycles, and "loses"
#: when it takes at least as many: a stratum never lands on the fence between the two.
PAYS_BELOW = 0.7
DENSE_STRATA = ((128, 96, 192), (192, 128, 384), (256, 128, 1024), (128, 160, 1536),
                (320, 96, 2048), (256, 192, 576))  # fmt: skip
TRANSFORMER_STRATA = ((32, 64), (64, 96), (96, 128), (128, 160))  # (d, seq)
CNN_STRATA = ((2, 16), (3, 12), (3, 16), (4, 8))  # (layers, image size)
SCRATCHPAD_STRATA = ((64, 160), (96, 128), (96, 160), (128, 192))  # (d, seq)
TIGHT_STRATA = (40, 48, 56, 64)  # buffers


#: How many draws a stratum with an outcome tries before it takes the one nearest to it.
OUTCOME_TRIES = 40


def redrawn(draw: Callable[[np.random.Generator], Any], margin: Callable[[Any], float],
            rng: np.random.Generator, stratum: int | None) -> Any:  # fmt: skip
    """With a ``stratum``: ``draw(rng)`` until ``margin`` of a draw is at least 0 (the
    stratum's outcome holds, off its fence), at most :data:`OUTCOME_TRIES` times: that draw,
    else the one with the largest margin. Without one (an instance drawn from the whole
    family): the first draw as it comes. The one way every family with an outcome redraws.

    Example (digits 4, 5, 7, ... drawn until one is at least 7):
        >>> digit, at_least_7 = (lambda r: int(r.integers(10))), (lambda x: x - 7)
        >>> redrawn(digit, at_least_7, np.random.default_rng(1), stratum=0)
        7
        >>> redrawn(digit, at_least_7, np.random.default_rng(1), stratum=None)
        4
    """
    if stratum is None:
        return draw(rng)
    best, best_margin = None, -math.inf
    for _ in range(OUTCOME_TRIES):
        problem = draw(rng)
        m = margin(problem)
        if m > best_margin:
            best, best_margin = problem, m
        if m >= 0:
            break
    return best


def compile_with(graph: Graph, partition: Any = None, plan: Any = None) -> Any:
    """``graph`` compiled for :data:`CHIP` with a fixed partition (or no fusion) and a fixed
    plan (or greedy by size), unsimplified: how every instance's numbers are measured."""
    fusion = (lambda g, c: partition) if partition is not None else "none"
    planner = (lambda records, **kw: plan) if plan is not None else "greedy_by_size"
    return compile(graph, chip=CHIP, fusion=fusion, planner=planner, simplify=False)


def chain_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`chain_graph` with a size from :data:`CHAIN_STRATA` and a seeded length and ops.

    With a stratum, the graph is redrawn (from the same seeded stream) until merging every
    op into one kernel pays off exactly when the stratum says so; without one, the first
    draw is taken.
    """
    rng = family_rng(seed, 1)
    rows, cols, pays = stratum_row(CHAIN_STRATA, stratum, rng)

    def draw(r: np.random.Generator) -> Graph:
        return chain_graph(int(r.integers(2**31)), rows, cols, int(r.integers(3, 6)))

    def margin(graph: Graph) -> float:
        ratio = one_kernel_ratio(graph)
        return PAYS_BELOW - ratio if pays else ratio - 1

    graph = redrawn(draw, margin, rng, stratum)
    return dataclasses.replace(graph, name=f"chains{seed}")


def one_kernel_ratio(graph: Graph) -> float:
    """The cycles of one kernel for every op of ``graph`` over those of one kernel per op, on
    :data:`CHIP` (above 1 when the one kernel's working set spills out of the SRAM)."""
    ops = [i for i, node in enumerate(graph.nodes) if node.op != "constant"]
    one = compile_with(graph, Partition([ops], graph=graph))
    return one.report.cycles / compile_with(graph).report.cycles


def epilogue_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`epilogue_graph` with seeded shapes, depth and extra epilogue ops; the widths
    straddle the SRAM budget, so some epilogues fit and some spill."""
    rng = family_rng(seed, 2)
    rows, d, h = stratum_row(DENSE_STRATA, stratum, rng)
    return epilogue_graph(seed, rows, d, h, int(rng.integers(2, 5)), extra=2)


# The fusion challenge gives full credit within its slack (6%) of the reference and none at
# one kernel per op, linear between. Where fusing barely pays (a small transformer whose
# reference is 7% faster than one kernel per op), that line is 1% of the reference wide: 1%
# more cycles takes an instance from full credit to none, and it grades by luck. A stratum
# of the challenge is therefore redrawn until fusion pays at least :data:`CHALLENGE_GAP`
# (:func:`fusion_gap`): the line is then at least 6% wide.
def transformer_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`transformer_graph` with a size from :data:`TRANSFORMER_STRATA` and a seeded MLP
    width, activation and extra elementwise ops; with a stratum, redrawn until fusion pays
    (see above)."""
    rng = family_rng(seed, 3)
    d, seq = stratum_row(TRANSFORMER_STRATA, stratum, rng)

    def draw(r: np.random.Generator) -> Graph:
        length = seq + 16 * int(r.integers(0, 3))
        ff = d * int(r.integers(2, 5))
        act = str(r.choice(("gelu", "relu", "sigmoid", "tanh")))
        return transformer_graph(seed, length, d, ff, act, extra=0.5)

    return redrawn(draw, fusion_margin, rng, stratum)


def cnn_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`cnn_graph` with a depth and image size from :data:`CNN_STRATA` and seeded
    widths, batch and activations; with a stratum, redrawn until fusion pays (see above)."""
    rng = family_rng(seed, 4)
    layers, size = stratum_row(CNN_STRATA, stratum, rng)

    def draw(r: np.random.Generator) -> Graph:
        widths = tuple(8 * int(r.integers(1, 7)) for _ in range(layers))
        acts = tuple(str(r.choice(("relu", "gelu", "sigmoid", "tanh"))) for _ in range(layers))
        batch = 8 * int(r.integers(1, 5))
        return cnn_graph(seed, size, (3, *widths), batch, acts)

    return redrawn(draw, fusion_margin, rng, stratum)


class _Structure:
    """A graph as a memo key: its inputs, nodes and outputs, by identity, and not its name
    (a hidden instance is renamed after it is drawn; its nodes stay the same objects).
    Graphs and nodes are frozen and nodes compare by identity, so a remembered number is
    never another graph's."""

    __slots__ = ("graph", "key")

    def __init__(self, graph: Graph) -> None:
        self.graph, self.key = graph, (graph.inputs, graph.nodes, graph.outputs)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Structure) and self.key == other.key


def once_per_graph(maxsize: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator: ``fn(graph, *args)`` remembered for the last ``maxsize`` graphs and
    arguments. A drawn instance's redraw test (:func:`fusion_gap`,
    :func:`~grader.problems.kernels.double_buffer_gap`) and its scoring
    (:func:`grader.scoring.references.baseline`) ask for the same numbers of the same graph,
    one right after the other: the grader computes them once. ``maxsize`` need only cover the
    draws of one instance (:data:`OUTCOME_TRIES`, times the numbers asked of each), so a
    long-lived grading worker does not keep every graph it has seen (a large transformer
    block is about 1.6 MB). ``fn`` must be deterministic, return something frozen, and not
    depend on ``graph.name`` (see :class:`_Structure`). The wrapper's ``cache_clear`` and
    ``cache_info`` are the memo's."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        remembered = functools.lru_cache(maxsize=maxsize)(
            lambda structure, *args: fn(structure.graph, *args)
        )

        @functools.wraps(fn)
        def call(graph: Graph, *args: Any) -> Any:
            return remembered(_Structure(graph), *args)

        call.cache_clear = remembered.cache_clear  # type: ignore[attr-defined]
        call.cache_info = remembered.cache_info  # type: ignore[attr-defined]
        return call

    return decorate


@once_per_graph(OUTCOME_TRIES)
def _reference_fusion(graph: Graph) -> Partition:
    from chipsim.compiler import reference_fusion
    from chipsim.hw import get_chip

    return reference_fusion(graph, get_chip(CHIP))


def reference_partition(graph: Graph) -> Partition:
    """The reference fusion (:func:`chipsim.compiler.reference_fusion`) of ``graph`` on
    :data:`CHIP`, computed once per graph (:func:`once_per_graph`), with the graph asked for."""
    return dataclasses.replace(_reference_fusion(graph), graph=graph)


@once_per_graph(OUTCOME_TRIES)
def naive_cycles(graph: Graph) -> int:
    """``graph``'s cycles on :data:`CHIP` at one kernel per op, computed once per graph."""
    return compile_with(graph).report.cycles


def fusion_gap(graph: Graph) -> float:
    """One kernel per op over the reference fusion, in cycles on :data:`CHIP`. The challenge's
    reference is the best of three strategies, at most as slow as this one, so a draw with
    this gap has at least as much room."""
    fused = compile_with(graph, reference_partition(graph))
    return naive_cycles(graph) / fused.report.cycles


def fusion_margin(graph: Graph) -> float:
    """How far a challenge draw is from having room to earn (>= 0: it has)."""
    return fusion_gap(graph) - CHALLENGE_GAP


def mobilenet_variant_records(seed: int) -> list:
    """Usage records of a MobileNet-v1-shaped chain with seeded resolution, widths and strides."""
    from chipsim.passes.memory.instances import network_records

    rng, fp32 = family_rng(seed, 5), 4
    res = 32 * int(rng.integers(3, 8))
    hw, c = res // 2, 8 * int(rng.integers(2, 6))
    layers = [("input", res * res * 3 * fp32, []), ("conv1", hw * hw * c * fp32, ["input"])]
    for k in range(2, 2 + int(rng.integers(8, 15))):
        stride = 2 if hw > 4 and rng.random() < 0.3 else 1
        hw //= stride
        cout = 8 * int(rng.integers(2, 17))
        layers.append((f"dw{k}", hw * hw * c * fp32, [layers[-1][0]]))
        layers.append((f"pw{k}", hw * hw * cout * fp32, [layers[-1][0]]))
        c = cout
    layers.append(("avgpool", c * fp32, [layers[-1][0]]))
    layers.append(("fc", 1000 * fp32, ["avgpool"]))
    return network_records(layers)


def tight_records(seed: int, n: int = 60, quantum: int = 64) -> list:
    """A tight arena: ``n`` buffers cut from a full rectangle, then about a third of them made
    smaller by a few quanta, in a shuffled order under fresh names.

    The cut rectangle alone would plant its optimum (the rectangle's height) and, with it, a
    packing that replaying the cuts recovers; the shrunk buffers leave holes where no cut
    was, so neither the optimum nor the packing follows from how the instance was made. The
    lower bound still says how far any plan could go.
    """
    from chipsim.passes.memory.liveness import UsageRecord
    from chipsim.testing.memory_instances import packed_instance

    rng = family_rng(seed, 6)
    records = []
    for r in packed_instance(n, seed=int(rng.integers(2**63)), quantum=quantum):
        quanta = r.size // quantum
        if quanta > 1 and rng.random() < 0.35:
            quanta -= int(rng.integers(1, max(2, quanta // 3 + 1)))
        records.append((quanta * quantum, r.first, r.last))
    order = rng.permutation(len(records))
    return [UsageRecord(f"t{k}", *records[i]) for k, i in enumerate(order)]


# The memory challenge scores against a strong reference (:func:`search_plan`), and its simple
# answer (greedy by size, the baseline) earns half an instance, full credit only within the
# part's slack of the reference. An instance where greedy lands *near* that line would give
# half or full by luck, so a stratum of the challenge is redrawn until it does not: a tight
# arena leaves greedy at least :data:`CHALLENGE_GAP` above the reference (there is room to go
# beyond it), and a scratchpad block leaves it within :data:`REACHED` of the reference (its
# cycles; greedy's arena already fits, and matching it is the part's floor) or beyond the gap.
#: The baseline is this much above the reference on a tight arena: twice the slack (6%).
CHALLENGE_GAP = 1.12
#: On a scratchpad block the baseline "reaches" the reference within half the slack.
REACHED = 1.03


def search_plan(records: list) -> Any:
    """The memory challenge's reference plan: :func:`~chipsim.passes.memory.search.search`
    with :data:`SEARCH_EFFORT` (no clock, so the same plan on every machine). Remembered per
    process: a challenge's draw searches the records it keeps (:func:`baseline_gap`), and
    scoring asks for the same plan again."""
    return _search_plan(tuple(records))


@functools.lru_cache(maxsize=512)
def _search_plan(records: tuple) -> Any:
    from chipsim.passes.memory.search import search

    return search(list(records), alignment=ALIGNMENT, effort=SEARCH_EFFORT, time_limit=1e9)


def plan_records(graph: Graph) -> list:
    """The usage records of ``graph`` compiled without fusion (what a ``plan`` instance's
    planner places)."""
    from chipsim.compiler import kernel_records
    from chipsim.passes.fusion import no_fusion

    return kernel_records(graph, no_fusion(graph))[0]


def baseline_gap(problem: Graph | list) -> float:
    """Greedy by size over the reference (:func:`search_plan`): arena bytes for records,
    the compiled program's cycles (no fusion) for a graph."""
    from chipsim.passes.memory import get_planner

    greedy = get_planner("greedy_by_size")
    if not isinstance(problem, Graph):
        return greedy(problem, alignment=ALIGNMENT).arena_size / search_plan(problem).arena_size
    records = plan_records(problem)
    ours = compile_with(problem, plan=greedy(records, alignment=ALIGNMENT)).report.cycles
    return ours / compile_with(problem, plan=search_plan(records)).report.cycles


def _off_the_fence(gap: float, beyond_only: bool) -> float:
    """How far a baseline's ``gap`` to the reference is off the fence of full credit (> 0
    when the draw will do): beyond :data:`CHALLENGE_GAP`, or (unless ``beyond_only``)
    within :data:`REACHED`."""
    return gap - CHALLENGE_GAP if beyond_only else max(gap - CHALLENGE_GAP, REACHED - gap)


def _challenge_draw(draw, seed: int, stratum: int | None, beyond_only: bool) -> Any:
    """``draw(seed')`` for seeds derived from ``seed`` until greedy's gap to the reference
    is off the fence (:func:`_off_the_fence`), else the draw farthest from it; without a
    stratum, the first draw as it comes."""
    rng = family_rng(seed, 9)

    def pick(r: np.random.Generator) -> Any:
        return draw(int(r.integers(2**31)))

    return redrawn(pick, lambda p: _off_the_fence(baseline_gap(p), beyond_only), rng, stratum)


def tight_variant(seed: int, stratum: int | None = None) -> list:
    """:func:`tight_records` with a number of buffers from :data:`TIGHT_STRATA`; with a
    stratum, redrawn until greedy by size is at least :data:`CHALLENGE_GAP` above the
    reference."""
    n = stratum_row(TIGHT_STRATA, stratum, family_rng(seed, 7))
    return _challenge_draw(lambda s: tight_records(s, n), seed, stratum, beyond_only=True)


def scratchpad_variant(seed: int, stratum: int | None = None) -> Graph:
    """A transformer block whose activations outgrow the SRAM arena (the memory challenge's
    cycles instances): a size from :data:`SCRATCHPAD_STRATA`, seeded MLP width and act;
    with a stratum, redrawn until greedy's cycles are off the fence (see above)."""
    rng = family_rng(seed, 8)
    d, seq = stratum_row(SCRATCHPAD_STRATA, stratum, rng)

    def draw(s: int) -> Graph:
        r = family_rng(s, 8)
        act = str(r.choice(("gelu", "relu", "sigmoid", "tanh")))
        return transformer_graph(s, seq, d, d * int(r.integers(2, 5)), act, extra=0.5)

    return _challenge_draw(draw, seed, stratum, beyond_only=False)
