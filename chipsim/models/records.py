"""The activations a compiled model hands to the memory planner, as usage records.

The same steps as :func:`chipsim.compile` up to memory planning (simplify, fuse, kernel
liveness), without placing anything, so a model too big for a chip's DRAM still yields its
planning instance. These are the planner benchmark's "published models" family.
"""

from __future__ import annotations

from chipsim.compiler.pipeline import PIPELINE, CompileState
from chipsim.hw.chip import Chip, get_chip
from chipsim.ir.graph import Graph
from chipsim.passes.memory import UsageRecord


def activation_records(
    graph: Graph, fusion: str | None = None, chip: str | Chip = "edge-npu"
) -> list[UsageRecord]:
    """Usage records of ``graph``'s activations between kernels: one kernel per op when
    ``fusion`` is None (the model's own schedule), else under that fusion pass.

    It runs :data:`chipsim.PIPELINE` (the compiler's own stages) up to and including
    liveness, so the records are exactly those ``chipsim.compile`` would plan.
    """
    state = CompileState(
        source=graph, example_inputs=(), chip=get_chip(chip), fusion=fusion or "none"
    )
    for stage in PIPELINE:
        state = stage(state)
        if stage.name == "liveness":
            return state.records
    raise AssertionError("chipsim.PIPELINE has no liveness stage")
