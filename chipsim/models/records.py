"""The activations a compiled model hands to the memory planner, as usage records.

The same steps as :func:`chipsim.compile` up to memory planning (simplify, fuse, kernel
liveness), without placing anything, so a model too big for a chip's DRAM still yields its
planning instance. These are the planner benchmark's "published models" family.
"""

from __future__ import annotations

from chipsim.hw.chip import Chip, get_chip
from chipsim.ir.graph import Graph
from chipsim.passes.fusion import get_fusion, reference_fusion
from chipsim.passes.memory import UsageRecord
from chipsim.passes.simplify import simplify


def activation_records(
    graph: Graph, fusion: str | None = None, chip: str | Chip = "edge-npu"
) -> list[UsageRecord]:
    """Usage records of ``graph``'s activations between kernels: one kernel per op when
    ``fusion`` is None (the model's own schedule), else under that fusion pass."""
    from chipsim.compiler import codegen_feasible, codegen_kernel_cycles, kernel_records

    target = get_chip(chip)
    g = simplify(graph)
    fuse = get_fusion(fusion or "none")
    if fuse is reference_fusion:  # as chipsim.compile calls it: with measured kernel costs
        partition = fuse(
            g,
            target,
            feasible=codegen_feasible(g, target),
            kernel_cycles=codegen_kernel_cycles(g, target),
        )
    else:
        partition = fuse(g, target)
    records, _ = kernel_records(g, partition.with_graph(g))
    return records
