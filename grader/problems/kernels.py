"""The instruction-generation exercise's instance families: one kernel of a contraction and
its epilogue (a dense layer, a ResNet conv block), and the ops of part 1.

Drawn like every family (:mod:`~grader.problems.families`): the same seed and stratum give
the same kernel on every machine; the strata fix the sizes that decide how an instance
behaves, the seed moves them off round numbers and picks the activation (the skinny kernels'
row count is stratified too, :data:`ROW_STEPS`).

Example:
    >>> [v.shape for v in dense_kernel(3, 64, 256, 128, "gelu").inputs]
    [(64, 256), (256, 128), (128,)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chipsim.ir import Graph
from grader.problems.families import (
    CHALLENGE_GAP,
    CHIP,
    OUTCOME_TRIES,
    family_rng,
    once_per_graph,
    redrawn,
    stratum_row,
    stratum_step,
)

__all__ = [
    "ACTIVATIONS", "dense_kernel", "conv_kernel", "TILING_STRATA", "STREAMING_STRATA",
    "CONV_STRATA", "MLP_STRATA", "tiling_variant", "streaming_variant", "conv_variant",
    "mlp_variant", "SMALLEST_BLOCK", "generated_program", "program_cycles", "double_buffer_gap",
    "units_items", "ROW_STEPS",
]  # fmt: skip


#: The elementwise activations a dense kernel's epilogue draws from.
ACTIVATIONS = ("relu", "gelu", "sigmoid", "tanh")


def dense_kernel(seed: int, m: int, k: int, n: int, act: str | None = None) -> Graph:
    """One dense layer as one kernel, ``act(x @ w + b)``, every tensor an input in DRAM.

    ``act``: the activation (default: drawn from the seed)."""
    from chipsim.ir import GraphBuilder, f32

    rng = family_rng(seed, 20)
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
CONV_STRATA = ((2, 16, 32, 64), (4, 8, 64, 64), (2, 12, 64, 48), (2, 8, 32, 128))
MLP_STRATA = ((64, 256, 1024), (128, 512, 256), (32, 768, 768), (96, 384, 512))


def _moved(n: int, steps: int) -> int:
    """``n`` moved by ``steps`` steps of ``n / 16`` (at least 4, the tensor core's tile)."""
    step = max(4, n // 16)
    return max(step, n + step * steps)


#: The row counts' steps in the double-buffering part (steps of ``max(4, m // 16)`` rows: 4
#: for its strata), stratified (``stratum_step``): a skinny kernel's few rows fit a row tile
#: exactly or leave a ragged last tile, and that decides a fixed tile's cycles, so every
#: submission meets each step equally often.
ROW_STEPS = (-2, -1, 0, 1, 2)


def _jitter(rng: np.random.Generator, n: int, steps: int = 4) -> int:
    """``n`` moved by up to ``steps`` steps of ``n / 16`` (at least 4, the tensor core's
    tile): the draw moves sizes off the strata's round numbers (ragged last tiles), keeps
    their scale, and makes two draws rarely alike."""
    return _moved(n, int(rng.integers(-steps, steps + 1)))


def tiling_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = family_rng(seed, 21)
    m, k, n = (_jitter(rng, d) for d in stratum_row(TILING_STRATA, stratum, rng))
    return dense_kernel(seed, m, k, n)


def streaming_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = family_rng(seed, 22)
    m, k, n = stratum_row(STREAMING_STRATA, stratum, rng)
    rows = _moved(m, stratum_step(STREAMING_STRATA, stratum, ROW_STEPS, rng))
    return dense_kernel(seed, rows, _jitter(rng, k, 8), _jitter(rng, n, 8))


#: The naive program's tile edge: the smallest blocks the code generator would try.
SMALLEST_BLOCK = 16


def generated_program(name: str, graph: Graph) -> Any:
    """The code generator's program for a one-kernel ``graph`` (a kernel builder): ``double``
    (its own tiles, double buffered), ``single`` (its own tiles for single buffers) or
    ``smallest`` (16 x 16 x 16 tiles, single buffered: a correct loop nest that chose
    nothing)."""
    from chipsim.codegen.blocked import Blocks
    from chipsim.codegen.builder import generated
    from chipsim.hw import get_chip

    chip = get_chip(CHIP)
    if name == "double":
        return generated(graph, chip, double_buffer=True)
    if name == "single":
        return generated(graph, chip, double_buffer=False)
    if name == "smallest":
        n = SMALLEST_BLOCK
        return generated(graph, chip, blocks=Blocks(n, n, n, 1))
    raise KeyError(f"unknown program strategy {name!r}")


# The instruction-generation challenge scores against the code generator's double-buffered
# program, and its simple answer (the single-buffered one, the baseline) earns half an
# instance, all of it where it is as fast. A kernel too small for double buffering to pay
# (one 16 x 16 image, 32 output channels) would give the baseline full credit by
# luck of the draw, so a stratum of the challenge is redrawn until the single-buffered
# program is at least :data:`CHALLENGE_GAP` slower: there is always something to gain.
@once_per_graph(2 * OUTCOME_TRIES)  # single and double for every draw
def program_cycles(graph: Graph, name: str) -> int:
    """The cycles of :func:`generated_program` ``name`` for ``graph`` in a timing run,
    computed once per graph (:func:`~grader.problems.families.once_per_graph`)."""
    from chipsim.runtime.handwritten import run_kernel

    return run_kernel(generated_program(name, graph), functional=False)[1].cycles


def double_buffer_gap(graph: Graph) -> float:
    """The single-buffered program's cycles over the double-buffered one's (the challenge's
    baseline over its reference)."""
    return program_cycles(graph, "single") / program_cycles(graph, "double")


def program_margin(graph: Graph) -> float:
    """How far a challenge draw is from double buffering paying (>= 0: it pays enough)."""
    return double_buffer_gap(graph) - CHALLENGE_GAP


def conv_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = family_rng(seed, 23)
    images, size, cin, cout = stratum_row(CONV_STRATA, stratum, rng)

    def draw(r: np.random.Generator) -> Graph:
        n = max(1, images + int(r.integers(-1, 2)))
        edge = max(4, size + 2 * int(r.integers(-3, 4)))
        act = str(r.choice(("relu", "relu", *ACTIVATIONS[1:])))  # mostly ResNet's relu
        return conv_kernel(seed, n, edge, _jitter(r, cin, 2), _jitter(r, cout, 4), act)

    return redrawn(draw, program_margin, rng, stratum)


def mlp_variant(seed: int, stratum: int | None = None) -> Graph:
    rng = family_rng(seed, 24)
    m, k, n = stratum_row(MLP_STRATA, stratum, rng)

    def draw(r: np.random.Generator) -> Graph:
        return dense_kernel(seed, _jitter(r, m, 8), _jitter(r, k, 4), _jitter(r, n, 8), "gelu")

    return redrawn(draw, program_margin, rng, stratum)


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
    rng = family_rng(seed, 25)
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
