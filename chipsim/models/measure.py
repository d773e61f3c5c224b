"""A published model on a chip: eager against compiled, as the book and the benchmark show it.

Compiled means inference as a compiler does it: batch norm folded into the convolutions
(:func:`~chipsim.passes.fold_batchnorm.fold_batchnorm`), then :func:`chipsim.compile`. Eager
runs the graph as written, one kernel per op, timing only. A model whose f32 weights do not
fit the chip's DRAM is measured on the same chip with a larger DRAM, and says so.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from chipsim.compiler import compile as compile_graph
from chipsim.errors import OutOfMemoryError
from chipsim.hw.chip import Chip, get_chip
from chipsim.ir.graph import Graph
from chipsim.passes.fold_batchnorm import fold_batchnorm
from chipsim.passes.simplify import simplify
from chipsim.target import Level
from chipsim.workloads.eager import run_eager

BIG_DRAM = 4 * 2**30  # enough for every model here in f32


@dataclass(frozen=True)
class KernelPoint:
    """One compiled kernel on the roofline: FLOPs, DRAM bytes and cycles."""

    name: str
    flops: int
    dram_bytes: int
    cycles: int

    @property
    def intensity(self) -> float:
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")


@dataclass(frozen=True)
class ModelRun:
    """Eager and compiled costs of one model on one chip (wall times in seconds)."""

    model: str
    chip: Chip
    dram_raised: bool  # measured with DRAM raised to BIG_DRAM: the weights do not fit
    eager_cycles: int | None  # None: eager ran out of DRAM
    eager_kernels: int
    eager_dram_bytes: int | None
    cycles: int
    kernels: int
    dram_bytes: int
    arena: int
    lower_bound: int
    biggest: tuple[KernelPoint, ...]  # the compiled kernels with the most cycles, most first
    compile_s: float
    simulate_s: float

    @property
    def speedup(self) -> float | None:
        return None if self.eager_cycles is None else self.eager_cycles / self.cycles

    @property
    def ridge(self) -> float:
        """FLOPs per DRAM byte where the chip turns from memory- to compute-bound."""
        return self.chip.peak_flops / self.chip.dram_bandwidth


def with_dram(chip: Chip, capacity: int) -> Chip:
    """``chip`` with ``capacity`` bytes of DRAM."""
    return dataclasses.replace(chip, dram=dataclasses.replace(chip.dram, capacity_bytes=capacity))


def _compiled(graph: Graph, chip: Chip):
    t = time.perf_counter()
    program = compile_graph(graph, chip=chip)
    compile_s = time.perf_counter() - t
    zeros = [np.zeros(v.shape, v.dtype.numpy) for v in program.graph.inputs]
    t = time.perf_counter()
    _, report = program.run(*zeros, functional=False)
    return program, report, compile_s, time.perf_counter() - t


def measure(graph: Graph, chip: str | Chip, *, eager: bool = True, top: int = 3) -> ModelRun:
    """Compile and simulate ``graph`` (timing only) on ``chip``, and run it eagerly."""
    target, raised = get_chip(chip), False
    inference = fold_batchnorm(graph)
    # weights that cannot fit even before any activation: compiling would end out of memory
    weights = sum(n.type.nbytes for n in simplify(inference).nodes if n.is_constant)
    if weights > target.dram.capacity_bytes + target.registers.capacity_bytes:
        target, raised = with_dram(target, BIG_DRAM), True
    try:
        program, report, compile_s, simulate_s = _compiled(inference, target)
    except OutOfMemoryError:
        target, raised = with_dram(target, BIG_DRAM), True
        program, report, compile_s, simulate_s = _compiled(inference, target)
    points = sorted(report.kernels, key=lambda k: -k.cycles)[:top]
    biggest = tuple(KernelPoint(k.name, k.flops, k.dram_bytes, k.cycles) for k in points)
    eager_cycles = eager_dram = None
    eager_kernels = 0
    if eager:
        zeros = [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
        try:
            rep = run_eager(graph, *zeros, chip=target, functional=False).report
            eager_cycles, eager_kernels = rep.cycles, len(rep.kernels)
            eager_dram = rep.bytes_moved[Level.DRAM]
        except OutOfMemoryError:  # the caching allocator needs more than the static plan
            pass
    return ModelRun(
        graph.name, target, raised, eager_cycles, eager_kernels, eager_dram, report.cycles,
        len(program.kernels), report.bytes_moved[Level.DRAM], program.plan.arena_size,
        program.plan.lower_bound, biggest, compile_s, simulate_s,
    )  # fmt: skip
