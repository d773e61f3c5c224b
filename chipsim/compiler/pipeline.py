"""``chipsim.compile``: a pipeline of named stages from a Python function to a program.

The pipeline, one stage each (:data:`PIPELINE`)::

    trace -> simplify -> fuse -> liveness -> plan memory -> place -> codegen

Every stage is a :class:`~chipsim.passes.pipeline.Stage`: a name, one line saying what it
does, a function from a small :class:`CompileState` to the next, and the fields of the state
it reads and writes; the stages run in a :class:`~chipsim.passes.pipeline.Pipeline`, the
same one that composes the simplification passes and the reference fusion. Cut it with
``PIPELINE.until("fuse")``, swap a stage with ``PIPELINE.replace("fuse", my_stage)``, and
watch it with ``PIPELINE.with_instruments(PrintAfterEach())``. The learner's fusion pass or
memory planner replaces exactly one of them, through ``compile``'s arguments, and any stage
that fails says which it was. It is in the spirit of TVM's ``Sequential`` of passes.

Example:
    >>> import numpy as np, chipsim as cs
    >>> prog = cs.compile(lambda x: (x + 1) * 2, np.zeros(1024, np.float32))
    >>> [k.name for k in prog.kernels]
    ['fused_add_mul']
    >>> prog(np.full(1024, 3.0, np.float32))[:2]
    array([8., 8.], dtype=float32)
    >>> [stage.name for stage in cs.PIPELINE]
    ['trace', 'simplify', 'fuse', 'liveness', 'plan memory', 'place', 'codegen']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chipsim.codegen.link import link
from chipsim.codegen.streaming import streamed_inputs
from chipsim.compiler.fusion import get_fusion, run_fusion
from chipsim.compiler.records import kernel_records
from chipsim.errors import PassError
from chipsim.frontend.tracing import trace
from chipsim.hw.chip import Chip, get_chip
from chipsim.i18n import N_
from chipsim.ir.graph import Graph, Value
from chipsim.ir.verify import verify
from chipsim.passes.fusion import Partition
from chipsim.passes.memory import MemoryPlan, UsageRecord, get_planner, validate_plan
from chipsim.passes.pipeline import Pipeline, Stage
from chipsim.passes.placement import Placement, place
from chipsim.passes.simplify import simplify as simplify_graph
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


# -- the stages --------------------------------------------------------------------------------
def _trace(s: CompileState) -> CompileState:
    if isinstance(s.source, Graph):
        return s.but(graph=verify(s.source))
    return s.but(graph=trace(s.source, *s.example_inputs))


def _simplify(s: CompileState) -> CompileState:
    return s.but(graph=simplify_graph(s.graph)) if s.simplify else s


def _fuse(s: CompileState) -> CompileState:
    return s.but(partition=run_fusion(get_fusion(s.fusion), s.graph, s.chip))


def _liveness(s: CompileState) -> CompileState:
    records, planned = kernel_records(s.graph, s.partition)
    return s.but(records=records, planned=planned)


def _plan(s: CompileState) -> CompileState:
    plan = get_planner(s.planner or "naive")(s.records)
    return s.but(plan=_check_plan(plan, s.records))


def _place(s: CompileState) -> CompileState:
    offsets = {v: s.plan.offsets[r.id] for v, r in zip(s.planned, s.records, strict=True)}
    streamed = streamed_inputs(s.graph, s.partition.groups, s.chip)
    placement = place(s.graph, offsets, s.plan.arena_size, s.chip, streamed=streamed)
    return s.but(placement=placement)


def _codegen(s: CompileState) -> CompileState:
    linked = link(s.graph, s.chip, s.partition, s.placement, double_buffer=s.double_buffer)
    program = Program(s.graph, s.chip, s.partition, s.plan, s.placement, linked)
    return s.but(program=program)


def _check_plan(plan: Any, records: list[UsageRecord]) -> MemoryPlan:
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


#: The compiler's stages, in order. The book draws this list. The descriptions are marked
#: with ``N_`` for the translation catalogue (show them with ``tr``).
PIPELINE = Pipeline(
    [
        Stage("trace", N_("run the Python function on symbolic tensors: a static graph"),
              _trace, reads=("source", "example_inputs"), writes=("graph",)),
        Stage("simplify", N_("fold constants, merge common subexpressions, drop dead code"),
              _simplify, reads=("graph", "simplify"), writes=("graph",)),
        Stage("fuse", N_("partition the ops into kernels (operator fusion)"),
              _fuse, reads=("graph", "chip", "fusion"), writes=("partition",)),
        Stage("liveness", N_("when is each tensor passed between kernels alive?"),
              _liveness, reads=("graph", "partition"), writes=("records", "planned")),
        Stage("plan memory",
              N_("give every such tensor an offset in one arena, reusing dead space"),
              _plan, reads=("records", "planner"), writes=("plan",)),
        Stage("place", N_("choose DRAM, SRAM or registers for every tensor"),
              _place, reads=("graph", "partition", "chip", "records", "planned", "plan"),
              writes=("placement",)),
        Stage("codegen", N_("instructions per kernel: tiles, DMA, the right unit for each op"),
              _codegen, reads=("graph", "chip", "partition", "plan", "placement",
                               "double_buffer"), writes=("program",)),
    ],
    verify_each=False,
    wrap_errors=False,
    label="compile stage",
)  # fmt: skip


def compile(  # noqa: A001 - the public name the course uses
    fn_or_graph: Callable[..., Any] | Graph,
    *example_inputs: Any,
    chip: str | Chip = "edge-npu",
    fusion: str | Callable[..., Partition] | None = "reference",
    planner: str | Callable[..., MemoryPlan] | None = "greedy_by_size",
    simplify: bool = True,
    double_buffer: bool = True,
) -> Program:
    """Compile a function or graph for a simulated chip; returns a :class:`Program`.

    Runs the stages of :data:`PIPELINE` over a :class:`CompileState`.

    Args:
        fn_or_graph: a function of tensors (traced with ``example_inputs``) or a Graph.
        *example_inputs: arrays giving the shapes and dtypes of the function's arguments.
        chip: a preset name (see :func:`chipsim.chips`) or a :class:`Chip`.
        fusion: ``"reference"``, ``"none"``, ``"elementwise"``, ``None`` (no fusion) or a
            callable ``fusion(graph, chip) -> Partition`` (e.g. yours): every pass, named or
            not, is called and checked the same way.
        planner: ``"greedy_by_size"``, ``"first_fit"``, ``"search"``, ``"naive"``, ``None``
            (no reuse) or a callable ``planner(records, *, alignment) -> MemoryPlan``.
        simplify: run constant folding, CSE and DCE first.
        double_buffer: let DMA fill one tile buffer while the units compute on the other.
    """
    state = CompileState(
        fn_or_graph,
        example_inputs,
        get_chip(chip),
        fusion=fusion,
        planner=planner,
        simplify=simplify,
        double_buffer=double_buffer,
    )
    return PIPELINE(state).program
