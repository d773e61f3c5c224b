"""The activations a compiled model hands to the memory planner, as usage records.

The compiler's own stages up to memory planning (trace, simplify, fuse, liveness: the first
four of :data:`chipsim.compiler.PIPELINE`), without placing anything, so a model too big for a
chip's DRAM still yields its planning instance. These are the planner benchmark's "published
models" family.
"""

from __future__ import annotations

from chipsim.hw.chip import Chip, get_chip
from chipsim.ir.graph import Graph
from chipsim.passes.memory import UsageRecord


def activation_records(
    graph: Graph, fusion: str | None = None, chip: str | Chip = "edge-npu"
) -> list[UsageRecord]:
    """Usage records of ``graph``'s activations between kernels: one kernel per op when
    ``fusion`` is None (the model's own schedule), else under that fusion pass."""
    from chipsim.compiler import PIPELINE, CompileState
    from chipsim.passes.pipeline import Pipeline

    upto = PIPELINE.names.index("liveness") + 1
    stages = Pipeline(list(PIPELINE.stages[:upto]), wrap_errors=False)
    state = stages(CompileState(graph, (), get_chip(chip), fusion=fusion or "none"))
    return list(state.records)
