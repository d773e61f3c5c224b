"""Which graph inputs a compiled program should leave in DRAM for its kernel to stream.

Eager mode reads every input from DRAM, and its kernel streams a large one tile by tile, so
the DMA of tile t+1 overlaps the compute of tile t. If a compiled program first copied such
an input whole into SRAM, that copy could overlap nothing: a compiled single op would be
slower than the same op run eagerly. So an input that exactly one kernel reads, and that
kernel slices by rows or blocks, stays in DRAM (placement's ``streamed`` argument) when that
kernel is a single op, as in eager mode (see :func:`worth_streaming` for fused kernels).
An input that a kernel needs whole (a vector every row multiplies), or that several kernels
read, is copied on chip once, as before.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.hw import get_chip
    >>> b = GraphBuilder()
    >>> x = b.input((4096, 64), f32, "x")
    >>> g = b.build(b.op("relu", x))
    >>> [v.hint for v in streamed_inputs(g, [[0]], get_chip("edge-npu"))]
    ['x']
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from chipsim.codegen.blocked import loaded_values
from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.planning import plan_homes
from chipsim.hw.chip import Chip
from chipsim.ir.graph import Graph, Value
from chipsim.passes.placement import arena_budget, place_group
from chipsim.target import Level


def kernel_streams(kernel: KernelSpec, chip: Chip) -> set[Value]:
    """The DRAM inputs of ``kernel`` that it loads piece by piece (row tiles or blocks)."""
    plan, homes, blocked = plan_homes(kernel, chip)
    if plan.mode == "blocked" and blocked is not None:
        return set(loaded_values(blocked, kernel)) & set(kernel.inputs)
    if plan.mode == "tiled":
        return {v for v in kernel.inputs if v in homes and homes[v].kind == "stream"}
    return set()


def stand_in(graph: Graph, group: Sequence[int], chip: Chip, streamed: Collection[Value]):
    """The group's kernel in the stand-in layout of :func:`~chipsim.passes.placement.place_group`
    (activations on chip where they fit, ``streamed`` inputs in DRAM)."""
    spec = KernelSpec.of_group(graph, group, {})
    values = (*spec.inputs, *spec.outputs)
    homes, dram = place_group(graph, chip, values, on_chip=True, streamed=streamed)
    where = {v: Location(level, offset) for v, (level, offset) in homes.items()}
    window = (arena_budget(chip), chip.sram.capacity_bytes)
    return KernelSpec(
        spec.name, spec.nodes, spec.inputs, spec.outputs, where, window, Location(Level.DRAM, dram)
    )


def worth_streaming(
    graph: Graph, group: Sequence[int], chip: Chip, candidates: Collection[Value]
) -> set[Value]:
    """Of ``candidates`` (graph inputs no other kernel reads), those the group's kernel should
    stream from DRAM: the kernel is a single op (as in eager mode) and slices them by rows or
    blocks. A fused kernel keeps its inputs on chip: its tiles are sized for the SRAM left
    after them, and streaming one input through a chain of contractions was measured slower
    (an MLP on edge-npu: 5,202 against 3,838 cycles)."""
    spec = KernelSpec.of_group(graph, group, {})
    if sum(1 for n in spec.nodes if not n.is_constant) != 1:
        return set()
    everything_in_dram = {v: Location(Level.DRAM, 0) for v in (*spec.inputs, *spec.outputs)}
    in_dram = KernelSpec.of_group(graph, group, everything_in_dram)
    return kernel_streams(in_dram, chip) & set(candidates)


def streamed_inputs(graph: Graph, groups: Sequence[Sequence[int]], chip: Chip) -> list[Value]:
    """Graph inputs read by exactly one kernel (group) that is better off streaming them."""
    readers: dict[Value, list[int]] = {}
    for g, group in enumerate(groups):
        for i in group:
            for v in graph.nodes[i].inputs:
                if v in graph.inputs and g not in readers.setdefault(v, []):
                    readers[v].append(g)
    out: list[Value] = []
    for g, group in enumerate(groups):
        mine = [v for v, gs in readers.items() if gs == [g]]
        if mine:
            chosen = worth_streaming(graph, group, chip, mine)
            out += [v for v in mine if v in chosen]
    return out
