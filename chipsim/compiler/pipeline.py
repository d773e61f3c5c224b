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

from collections.abc import Callable
from typing import Any

from chipsim.compiler.fusion import get_fusion, run_fusion
from chipsim.compiler.lowering import (
    CompileState,
    codegen_stage,
    liveness_stage,
    place_stage,
    plan_stage,
)
from chipsim.frontend.tracing import trace
from chipsim.hw.chip import Chip, get_chip
from chipsim.i18n import N_
from chipsim.ir.graph import Graph
from chipsim.ir.verify import verify
from chipsim.passes.fusion import Partition
from chipsim.passes.memory import MemoryPlan
from chipsim.passes.pipeline import Pipeline, Stage
from chipsim.passes.simplify import simplify as simplify_graph
from chipsim.runtime.program import Program


# -- the stages --------------------------------------------------------------------------------
def _trace(s: CompileState) -> CompileState:
    if isinstance(s.source, Graph):
        return s.but(graph=verify(s.source))
    return s.but(graph=trace(s.source, *s.example_inputs))


def _simplify(s: CompileState) -> CompileState:
    return s.but(graph=simplify_graph(s.graph)) if s.simplify else s


def _fuse(s: CompileState) -> CompileState:
    return s.but(partition=run_fusion(get_fusion(s.fusion), s.graph, s.chip))


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
              liveness_stage, reads=("graph", "partition"), writes=("records", "planned")),
        Stage("plan memory",
              N_("give every such tensor an offset in one arena, reusing dead space"),
              plan_stage, reads=("records", "planner"), writes=("plan",)),
        Stage("place", N_("choose DRAM, SRAM or registers for every tensor"),
              place_stage, reads=("graph", "partition", "chip", "records", "planned", "plan"),
              writes=("placement",)),
        Stage("codegen", N_("instructions per kernel: tiles, DMA, the right unit for each op"),
              codegen_stage, reads=("graph", "chip", "partition", "plan", "placement",
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
