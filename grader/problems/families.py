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
import math
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
    "dense_kernel", "conv_kernel", "tiling_variant", "streaming_variant", "conv_variant",
    "mlp_variant", "units_items", "ALIGNMENT", "SEARCH_EFFORT", "search_plan", "plan_records",
    "baseline_gap",
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
def _rng(seed: int, family: int) -> np.random.Generator:
    return np.random.default_rng([seed, family])


def _stratum(table: tuple, stratum: int | None, rng: np.random.Generator) -> tuple:
    """Row ``stratum`` of ``table`` (cycling), or a random row when there is no stratum."""
    return table[int(rng.integers(len(table))) if stratum is None else stratum % len(table)]


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


#: How many seeds a stratum with an outcome tries before it takes the last one drawn.
OUTCOME_TRIES = 40


def chain_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`chain_graph` with a size from :data:`CHAIN_STRATA` and a seeded length and ops.

    With a stratum, the graph is redrawn (from seeds derived from ``seed``) until merging
    every op into one kernel pays off exactly when the stratum says so; without one, the
    first draw is taken.
    """
    rng = _rng(seed, 1)
    rows, cols, pays = _stratum(CHAIN_STRATA, stratum, rng)
    for _ in range(OUTCOME_TRIES if stratum is not None else 1):
        graph = chain_graph(int(rng.integers(2**31)), rows, cols, int(rng.integers(3, 6)))
        ratio = one_kernel_ratio(graph)
        if (ratio <= PAYS_BELOW) if pays else (ratio >= 1):
            break
    return dataclasses.replace(graph, name=f"chains{seed}")


def one_kernel_ratio(graph: Graph) -> float:
    """The cycles of one kernel for every op of ``graph`` over those of one kernel per op, on
    :data:`CHIP` (above 1 when the one kernel's working set spills out of the SRAM)."""
    ops = [i for i, node in enumerate(graph.nodes) if node.op != "constant"]

    def cycles(fusion) -> int:
        program = compile(graph, chip=CHIP, fusion=fusion, planner="greedy_by_size", simplify=False)
        return program.report.cycles

    return cycles(lambda g, chip: Partition([ops], graph=g)) / cycles("none")


def epilogue_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`epilogue_graph` with seeded shapes, depth and extra epilogue ops; the widths
    straddle the SRAM budget, so some epilogues fit and some spill."""
    rng = _rng(seed, 2)
    rows, d, h = _stratum(DENSE_STRATA, stratum, rng)
    return epilogue_graph(seed, rows, d, h, int(rng.integers(2, 5)), extra=2)


def transformer_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`transformer_graph` with a size from :data:`TRANSFORMER_STRATA` and a seeded MLP
    width, activation and extra elementwise ops."""
    rng = _rng(seed, 3)
    d, seq = _stratum(TRANSFORMER_STRATA, stratum, rng)
    seq += 16 * int(rng.integers(0, 3))
    ff = d * int(rng.integers(2, 5))
    act = str(rng.choice(("gelu", "relu", "sigmoid", "tanh")))
    return transformer_graph(seed, seq, d, ff, act, extra=0.5)


def cnn_variant(seed: int, stratum: int | None = None) -> Graph:
    """:func:`cnn_graph` with a depth and image size from :data:`CNN_STRATA` and seeded
    widths, batch and activations."""
    rng = _rng(seed, 4)
    layers, size = _stratum(CNN_STRATA, stratum, rng)
    widths = tuple(8 * int(rng.integers(1, 7)) for _ in range(layers))
    acts = tuple(str(rng.choice(("relu", "gelu", "sigmoid", "tanh"))) for _ in range(layers))
    batch = 8 * int(rng.integers(1, 5))
    return cnn_graph(seed, size, (3, *widths), batch, acts)


def mobilenet_variant_records(seed: int) -> list:
    """Usage records of a MobileNet-v1-shaped chain with seeded resolution, widths and strides."""
    from chipsim.passes.memory.instances import network_records

    rng, fp32 = _rng(seed, 5), 4
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

    rng = _rng(seed, 6)
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
    with :data:`SEARCH_EFFORT` (no clock, so the same plan on every machine)."""
    from chipsim.passes.memory.search import search

    return search(records, alignment=ALIGNMENT, effort=SEARCH_EFFORT, time_limit=1e9)


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

    def cycles(plan) -> int:
        return compile(problem, chip=CHIP, fusion="none", planner=lambda _r, **_kw: plan,
                       simplify=False).report.cycles  # fmt: skip

    return cycles(greedy(records, alignment=ALIGNMENT)) / cycles(search_plan(records))


def _challenge_draw(draw, seed: int, stratum: int | None, beyond_only: bool) -> Any:
    """``draw(seed')`` for seeds derived from ``seed`` until the baseline's gap to the
    reference is off the fence (see above), else the draw farthest from it; without a
    stratum, the first draw as it comes."""
    rng = _rng(seed, 9)
    if stratum is None:
        return draw(int(rng.integers(2**31)))
    best, best_margin = None, -math.inf
    for _ in range(OUTCOME_TRIES):
        problem = draw(int(rng.integers(2**31)))
        gap = baseline_gap(problem)
        # how far off the fence: > 0 when the draw will do
        margin = gap - CHALLENGE_GAP if beyond_only else max(gap - CHALLENGE_GAP, REACHED - gap)
        if margin > best_margin:
            best, best_margin = problem, margin
        if margin >= 0:
            break
    return best


def tight_variant(seed: int, stratum: int | None = None) -> list:
    """:func:`tight_records` with a number of buffers from :data:`TIGHT_STRATA`; with a
    stratum, redrawn until greedy by size is at least :data:`CHALLENGE_GAP` above the
    reference."""
    n = _stratum(TIGHT_STRATA, stratum, _rng(seed, 7))
    return _challenge_draw(lambda s: tight_records(s, n), seed, stratum, beyond_only=True)


def scratchpad_variant(seed: int, stratum: int | None = None) -> Graph:
    """A transformer block whose activations outgrow the SRAM arena (the memory challenge's
    cycles instances): a size from :data:`SCRATCHPAD_STRATA`, seeded MLP width and act;
    with a stratum, redrawn until greedy's cycles are off the fence (see above)."""
    rng = _rng(seed, 8)
    d, seq = _stratum(SCRATCHPAD_STRATA, stratum, rng)

    def draw(s: int) -> Graph:
        r = _rng(s, 8)
        act = str(r.choice(("gelu", "relu", "sigmoid", "tanh")))
        return transformer_graph(s, seq, d, d * int(r.integers(2, 5)), act, extra=0.5)

    return _challenge_draw(draw, seed, stratum, beyond_only=False)


# -- instruction generation: one kernel of a contraction and its epilogue ------------------------
#: The elementwise activations a dense kernel's epilogue draws from.
ACTIVATIONS = ("relu", "gelu", "sigmoid", "tanh")


def dense_kernel(seed: int, m: int, k: int, n: int, act: str | None = None) -> Graph:
    """One dense layer as one kernel, ``act(x @ w + b)``, every tensor an input in DRAM.

    ``act``: the activation (default: drawn from the seed)."""
    from chipsim.ir import GraphBuilder, f32

    rng = _rng(seed, 20)
    act = act or str(rng.choice(ACTIVATIONS))
    b = GraphBuilder(f"dense{seed}")
    x, w, bias = b.input((m, k), f32, "x"), b.input((k, n), f32, "w"), b.input((n,), f32, "b")
    return b.build(b.op(act, b.op("add", b.op("matmul", x, w), bias)))


def conv_kernel(seed: int, images: int, size: int, cin: int, cout: int, act: str = "relu") -> Graph:
    """A ResNet block's first kernel: 3x3 conv -> batchnorm (folded to a per-channel scale
    and shift, as inference does) -> ``act``; NHWC, every tensor an input in DRAM."""
    from chipsim.ir import GraphBuilder, f32

    b = GraphBuilder(f"conv{seed}")
    x = b.input((images, size, size, cin), f32, "x")
    w = b.input((3, 3, cin, cout), f32, "w")
    scale, shift = b.input((cout,), f32, "scale"), b.input((cout,), f32, "shift")
    y = b.op("conv2d", x, w, padding="same")
    return b.build(b.op(act, b.op("add", b.op("mul", y, scale), shift)))


#: Dense kernels too big for SRAM whole (x, w and the output together pass 512 KiB).
TILING_STRATA = ((256, 256, 256), (128, 512, 512), (512, 256, 128), (256, 512, 256),
                 (384, 256, 384), (192, 768, 192))  # fmt: skip
#: Skinny dense kernels (few rows, a large weight): moving the weight takes about as long as
#: the tensor core's work, so overlapping the two (double buffering) nearly halves the time.
STREAMING_STRATA = ((16, 1024, 512), (32, 512, 1024), (64, 1024, 256), (16, 512, 1024))
#: ResNet-style conv blocks (images, size, cin, cout) and transformer MLP layers.
CONV_STRATA = ((2, 16, 32, 64), (4, 8, 64, 64), (1, 16, 64, 32), (2, 8, 32, 128))
MLP_STRATA = ((64, 256, 1024), (128, 512, 256), (32, 768, 768), (96, 384, 512))


def _jitter(rng: np.random.Generator, n: int, steps: int = 4) -> int:
    """``n`` moved by up to ``steps`` steps of ``n / 16`` (at least 4, the tensor core's
    tile): the draw moves sizes off the strata's round numbers (ragged last tiles), keeps
    their scale, and makes two draws rarely alike."""
    step = max(4, n // 16)
    return max(step, n + step * int(rng.integers(-steps, steps + 1)))


def tiling_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = _rng(seed, 21)
    m, k, n = (_jitter(rng, d) for d in _stratum(TILING_STRATA, stratum, rng))
    return dense_kernel(seed, m, k, n)


def streaming_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = _rng(seed, 22)
    m, k, n = _stratum(STREAMING_STRATA, stratum, rng)
    return dense_kernel(seed, _jitter(rng, m, 2), _jitter(rng, k, 8), _jitter(rng, n, 8))


def conv_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = _rng(seed, 23)
    images, size, cin, cout = _stratum(CONV_STRATA, stratum, rng)
    images = max(1, images + int(rng.integers(-1, 2)))
    size = max(4, size + 2 * int(rng.integers(-3, 4)))
    act = str(rng.choice(("relu", "relu", *ACTIVATIONS[1:])))  # mostly ResNet's relu
    return conv_kernel(seed, images, size, _jitter(rng, cin, 2), _jitter(rng, cout, 4), act)


def mlp_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = _rng(seed, 24)
    m, k, n = _stratum(MLP_STRATA, stratum, rng)
    return dense_kernel(seed, _jitter(rng, m, 8), _jitter(rng, k, 4), _jitter(rng, n, 8), "gelu")


#: The ops the unit part asks about, by kind: contractions, elementwise, reductions, moves.
UNIT_OPS = {
    "contraction": ("matmul",),
    "elementwise": ("add", "mul", "relu", "exp", "gelu", "maximum"),
    "reduction": ("sum", "max"),
    "transfer": ("load", "store"),
}
UNIT_DTYPES = {"contraction": ("f32", "f16", "i8"), "elementwise": ("f32", "f16", "i32"),
               "reduction": ("f32", "f16"), "transfer": ("f32", "f16", "i8")}  # fmt: skip


def units_items(seed: int, count: int = 16) -> dict:
    """Part 1's items: ``count`` ops of a kernel, each ``{"op", "dtype", "shapes"}`` (the
    input shapes; a matmul's are ``[[m, k], [k, n]]``), every kind of op represented."""
    rng = _rng(seed, 25)
    kinds = list(UNIT_OPS)
    items = []
    for i in range(count):
        kind = kinds[i % len(kinds)] if i < 2 * len(kinds) else str(rng.choice(kinds))
        op = str(rng.choice(UNIT_OPS[kind]))
        floats_only = op in ("exp", "gelu")  # transcendental: floating point only
        dtype = str(rng.choice(UNIT_DTYPES[kind][: 2 if floats_only else 3]))
        r, c = (int(rng.choice((16, 32, 64, 128, 256))) for _ in range(2))
        if kind == "contraction":
            shapes = [[r, c], [c, int(rng.choice((16, 32, 64, 128)))]]
        elif op in ("add", "mul", "maximum"):
            shapes = [[r, c], [r, c]]
        else:
            shapes = [[r, c]]
        items.append({"op": op, "dtype": dtype, "shapes": shapes})
    order = rng.permutation(len(items))
    return {"items": [items[int(i)] for i in order]}
