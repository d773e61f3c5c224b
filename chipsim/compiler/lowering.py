"""After fusion: the program of a partition — ``compile``'s last four stages.

``chipsim.compile`` runs these stages after its fusion stage (:mod:`~chipsim.compiler.pipeline`
puts them in :data:`~chipsim.compiler.pipeline.PIPELINE`); the reference fusion's last stage
runs them too, to time whole programs (:func:`program_of`). They live here, below both, so
that the fusion module can use them without importing the pipeline that imports it; the state
they hand on, :class:`CompileState`, lives with them.

Example:
    >>> import numpy as np
    >>> from chipsim.hw import get_chip
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.passes.fusion import Partition
    >>> b = GraphBuilder()
    >>> x = b.input((64, 64), f32)
    >>> g = b.build(b.op("relu", b.op("add", x, b.const(np.ones(64, np.float32)))))
    >>> [k.name for k in program_of(g, get_chip("edge-npu"), Partition([[1, 2]], graph=g)).kernels]
    ['fused_add_relu']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chipsim.codegen.link import link
from chipsim.codegen.streaming import streamed_inputs
from chipsim.compiler.records import kernel_records
from chipsim.errors import PassError
from chipsim.hw.chip import Chip
from chipsim.ir.graph import Graph, Value
from chipsim.passes.fusion import Partition
from chipsim.passes.memory import MemoryPlan, UsageRecord, get_planner, validate_plan
from chipsim.passes.placement import Placement, place
from chipsim.runtime.program import Program


@dataclass(frozen=True)
class CompileState:
    """What the stages hand each other: the inputs of ``compile`` and each stage's result."""

    source: Callable[..., Any] | Graph
    example_inputs: tuple[Any, ...]
    chip: Chip
    fusion: str | Callable[..., Partition] | None = "reference"
    planner: str | Callable[..., MemoryPlan] | None = "greedy_by_size"
    simplify: bool = True
    double_buffer: bool = True
    graph: Graph | None = None
    partition: Partition | None = None
    records: list[UsageRecord] = field(default_factory=list)
    planned: list[Value] = field(default_factory=list)
    plan: MemoryPlan | None = None
    placement: Placement | None = None
    program: Program | None = None

    def but(self, **changes: Any) -> CompileState:
        """A copy with ``changes``: each stage returns the state with its result added."""
        return dataclasses.replace(self, **changes)


def liveness_stage(s: CompileState) -> CompileState:
    records, planned = kernel_records(s.graph, s.partition)
    return s.but(records=records, planned=planned)


def plan_stage(s: CompileState) -> CompileState:
    plan = get_planner(s.planner or "naive")(s.records)
    return s.but(plan=checked_plan(plan, s.records))


def place_stage(s: CompileState) -> CompileState:
    offsets = {v: s.plan.offsets[r.id] for v, r in zip(s.planned, s.records, strict=True)}
    streamed = streamed_inputs(s.graph, s.partition.groups, s.chip)
    placement = place(s.graph, offsets, s.plan.arena_size, s.chip, streamed=streamed)
    return s.but(placement=placement)


def codegen_stage(s: CompileState) -> CompileState:
    linked = link(s.graph, s.chip, s.partition, s.placement, double_buffer=s.double_buffer)
    program = Program(s.graph, s.chip, s.partition, s.plan, s.placement, linked)
    return s.but(program=program)


def checked_plan(plan: Any, records: list[UsageRecord]) -> MemoryPlan:
    """``plan`` if it is a valid :class:`MemoryPlan` of exactly ``records``; a
    :class:`PassError` naming what is wrong otherwise (the planner may be the learner's)."""
    if not isinstance(plan, MemoryPlan):
        raise PassError(
            f"the memory planner returned {type(plan).__name__}; it must return a MemoryPlan"
        )
    given = {r.id: r for r in plan.records}
    for r in records:
        if given.get(r.id) != r:
            raise PassError(
                f"the memory plan does not cover tensor {r.id!r} as given "
                f"({r}); plan exactly the records you were handed"
            )
    return validate_plan(plan)


def program_of(
    graph: Graph,
    chip: Chip,
    partition: Partition,
    planner: Any = "greedy_by_size",
    double_buffer: bool = True,
) -> Program:
    """The whole program of ``partition``, as ``compile`` makes it after its fusion stage."""
    s = CompileState(graph, (), chip, planner=planner, double_buffer=double_buffer,
                     graph=graph, partition=partition)  # fmt: skip
    for stage in (liveness_stage, plan_stage, place_stage, codegen_stage):
        s = stage(s)
    return s.program
