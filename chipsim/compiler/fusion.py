"""The fusion stage of ``chipsim.compile``: the reference fusion, the named passes, and how a
fusion pass (yours or ours, treated alike) is run and checked.

The reference fusion is four named stages composed in a
:class:`~chipsim.passes.pipeline.Pipeline` (:data:`REFERENCE_FUSION`), over a small
:class:`FusionState`::

    capacity   the code generator's rule: which kernels fit, and what each one costs
    rules      grow kernels by the rule table, within that capacity      (rule_fusion)
    autotune   merge and move kernels while the measured cost goes down  (autotune)
    best       the fastest whole program of: tuned, rules, one kernel per op

The **one capacity rule** the rules and the autotuner obey is the code generator's own
feasibility (:func:`chipsim.codegen.feasibility.kernel_fits`), and the autotuner times
candidate kernels on the simulator (:func:`chipsim.codegen.feasibility.kernel_timer`). It
lives here, above the code generator, because it asks the code generator; the rule pass and
the autotuner know only the IR (:mod:`chipsim.passes.fusion`). Swap the first stage for the
fusion cost model's estimates and you get :data:`ESTIMATED_FUSION`, which needs only a
chip's fields (:class:`chipsim.target.Chip`); cut it after ``rules`` and you get the rule
pass alone.

Why the last stage: the autotuner times each kernel on its own, but a program's cycles also
depend on what passes between its kernels (the activations' arena, what spills, what
overlaps), so a merge that shortens the kernels can lengthen the program (about one random
graph in twenty, by up to 4%). ``best`` builds the three programs
(:func:`~chipsim.compiler.lowering.program_of`) and keeps the fastest, the tuned one on a tie:
the reference is never slower than its own rules or than no fusion at all.

Example:
    >>> import numpy as np
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((64, 64), f32)
    >>> g = b.build(b.op("relu", b.op("add", x, b.const(np.ones(64, np.float32)))))
    >>> print(reference_fusion(g, "edge-npu"))
    fused_add_relu: %2 %3
    >>> REFERENCE_FUSION.names
    ['capacity', 'rules', 'autotune', 'best']
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chipsim.codegen.feasibility import grid_dependency, kernel_fits, kernel_timer
from chipsim.compiler.lowering import program_of
from chipsim.errors import ChipsimError, PartitionError, PassError
from chipsim.hw.chip import Chip, get_chip
from chipsim.ir.graph import Graph
from chipsim.passes.fusion import (
    Partition,
    autotune,
    fuse_elementwise_chains,
    no_fusion,
    rule_fusion,
    validate_partition,
)
from chipsim.passes.pipeline import Pipeline, Stage
from chipsim.reference import reference_for
from chipsim.target import Chip as Target


@dataclass(frozen=True)
class FusionState:
    """What the reference fusion's stages hand each other.

    Attributes:
        graph: the graph to partition.
        chip: the chip it is for (a :class:`~chipsim.hw.Chip`; the estimates need only
            its fields, :class:`chipsim.target.Chip`; the rules alone accept None).
        fits: the capacity rule, ``fits(group) -> bool`` (None: the SRAM estimate).
        kernel_cycles: a kernel's measured cost, ``kernel_cycles(group) -> int`` (None: the
            cost model's estimate).
        partition: the kernels so far.
        rules: the rule pass's partition (the autotuner's starting point).
    """

    graph: Graph
    chip: Target | None
    fits: Callable[[Sequence[int]], bool] | None = None
    kernel_cycles: Callable[[Sequence[int]], int] | None = None
    partition: Partition | None = None
    rules: Partition | None = None


@reference_for("fusion")
def _capacity(s: FusionState) -> FusionState:
    fits, timer = kernel_fits(s.graph, s.chip), kernel_timer(s.graph, s.chip)
    return dataclasses.replace(s, fits=fits, kernel_cycles=timer)


@reference_for("fusion")
def _estimates(s: FusionState) -> FusionState:
    return dataclasses.replace(s, fits=None, kernel_cycles=None)


@reference_for("fusion")
def _rules(s: FusionState) -> FusionState:
    partition = rule_fusion(s.graph, s.chip, fits=s.fits)
    return dataclasses.replace(s, partition=partition, rules=partition)


@reference_for("fusion")
def _autotune(s: FusionState) -> FusionState:
    partition = autotune(s.graph, s.chip, s.partition, fits=s.fits, kernel_cycles=s.kernel_cycles)
    return dataclasses.replace(s, partition=partition)


@reference_for("fusion")
def _best(s: FusionState) -> FusionState:
    options: list[Partition] = []
    for partition in (s.partition, s.rules, no_fusion(s.graph)):
        if partition is not None and all(partition.groups != o.groups for o in options):
            options.append(partition)

    def cycles(partition: Partition) -> float:
        try:
            return program_of(s.graph, s.chip, partition).report.cycles
        except ChipsimError:  # e.g. one kernel per op needs more DRAM than the chip has
            return math.inf

    timed = [cycles(p) for p in options]
    return dataclasses.replace(s, partition=options[timed.index(min(timed))])


#: The reference fusion, stage by stage (see the module docstring).
REFERENCE_FUSION = Pipeline(
    [
        Stage("capacity", "the code generator's rule: which kernels fit, what each costs",
              _capacity, reads=("graph", "chip"), writes=("fits", "kernel_cycles")),
        Stage("rules", "grow kernels by the rule table, within that capacity",
              _rules, reads=("graph", "chip", "fits"), writes=("partition", "rules")),
        Stage("autotune", "merge and move kernels while the measured cost goes down",
              _autotune, reads=("graph", "chip", "partition", "fits", "kernel_cycles"),
              writes=("partition",)),
        Stage("best", "the fastest whole program of: tuned, rules, one kernel per op",
              _best, reads=("graph", "chip", "partition", "rules"), writes=("partition",)),
    ],
    verify_each=False,
    wrap_errors=False,
    label="reference fusion stage",
)  # fmt: skip

#: The same stages on the fusion cost model's estimates instead of the code generator's
#: answers: for any object with a chip's fields (the rules alone: ``.until("rules")``),
#: up to the autotuner (without a chip preset there is no program to build and time).
ESTIMATED_FUSION = REFERENCE_FUSION.until("autotune").replace(
    "capacity",
    Stage("estimates", "the cost model's estimates: SRAM working sets, roofline cycles",
          _estimates, reads=("chip",), writes=("fits", "kernel_cycles")),
)  # fmt: skip


@reference_for("fusion")
def reference_fusion(graph: Graph, chip: str | Chip) -> Partition:
    """The reference fusion: :data:`REFERENCE_FUSION` on ``graph`` for ``chip``.

    Args:
        graph: the graph to partition.
        chip: a preset name or :class:`~chipsim.hw.Chip` (the code generator answers for
            it). For a chip's fields alone use :func:`estimated_fusion`; for the rules alone,
            :func:`~chipsim.passes.fusion.rule_fusion`.
    """
    if not isinstance(chip, (str, Chip)):
        raise PassError(
            f"reference_fusion asks the code generator, so it needs a chip preset name or a "
            f"chipsim.hw.Chip, not {type(chip).__name__}; for a chip's fields alone use "
            "estimated_fusion(graph, chip), for the rules alone rule_fusion(graph)"
        )
    return REFERENCE_FUSION(FusionState(graph, get_chip(chip))).partition


@reference_for("fusion")
def estimated_fusion(graph: Graph, chip: Target | None) -> Partition:
    """:data:`ESTIMATED_FUSION`: the reference fusion's rules and autotuner on the cost
    model's estimates, for any object with a chip's fields (None: the rules alone, no
    capacity limit)."""
    stages = ESTIMATED_FUSION if chip is not None else ESTIMATED_FUSION.until("rules")
    return stages(FusionState(graph, chip)).partition


FusionPass = Callable[..., Partition]

#: Fusion passes by name; a learner's function can be passed wherever a name is accepted.
FUSION_PASSES: dict[str, FusionPass] = {
    "reference": reference_fusion,
    "none": no_fusion,
    "elementwise": fuse_elementwise_chains,
}


def get_fusion(spec: str | FusionPass | None) -> FusionPass:
    """A fusion pass by name (see :data:`FUSION_PASSES`), a callable, or None (no fusion).

    Example:
        >>> get_fusion("none").__name__
        'no_fusion'
    """
    if spec is None:
        return no_fusion
    if callable(spec):
        return spec
    if isinstance(spec, str) and spec in FUSION_PASSES:
        return FUSION_PASSES[spec]
    known = ", ".join(repr(k) for k in FUSION_PASSES)
    raise PassError(
        f"unknown fusion pass {spec!r}; use one of {known}, None (no fusion), or a function "
        "graph, chip -> Partition"
    )


def pass_name(fn: Any) -> str:
    """How an error names a pass: ``my_fusion``, or ``<lambda> (cell.py, line 3)``."""
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    code = getattr(fn, "__code__", None)
    if name.endswith("<lambda>") and code is not None:
        name += f" ({os.path.basename(code.co_filename)}, line {code.co_firstlineno})"
    return name


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARIES = tuple(
    os.path.abspath(p) for p in {sys.prefix, sys.base_prefix, os.path.dirname(os.__file__)}
)


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _own_code(filename: str) -> bool:
    """Whether ``filename`` is the caller's code: not chipsim's, not Python's or a library's,
    and not code generated without a file (``<frozen ...>``, a stand-in such as the grader's
    ``<withheld reference>``), but for IPython's cells (``<ipython-input-...>``)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input")
    return not os.path.abspath(filename).startswith((_PACKAGE, *_LIBRARIES))


def your_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of ``exc``'s traceback that is the caller's own code (not chipsim,
    Python, a library or generated code), or None if there is none."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if _own_code(f.filename) and f.name not in _COMPREHENSIONS  # the line is its caller's
    ]
    return frames[-1] if frames else None


def where_in_your_code(exc: BaseException) -> str:
    """`` at cell.py, line 7, in my_fusion: return merge(groups)``: where :func:`your_frame`
    is; ``""`` if there is none."""
    f = your_frame(exc)
    if f is None:
        return ""
    line = f": {f.line.strip()}" if f.line else ""
    return f" at {os.path.basename(f.filename)}, line {f.lineno}, in {f.name}{line}"


def run_fusion(fuse: FusionPass, graph: Graph, chip: Chip) -> Partition:
    """Run a fusion pass and check its answer; any pass, ours or a learner's, alike.

    Raises:
        PassError: the pass crashed (naming the pass and the line of your code where it
            happened) or returned something that is not a :class:`Partition`. A
            :class:`~chipsim.errors.ChipsimError` the pass raised keeps its kind; its message
            gains the pass's name and line.
        PartitionError: the partition is invalid (naming the pass, the nodes and groups).
    """
    name = pass_name(fuse)
    try:
        partition = fuse(graph, chip)
    except ChipsimError as exc:  # kept as it is (callers catch its kind), named and located
        exc.args = (f"fusion pass {name!r} failed{where_in_your_code(exc)}: {exc}",)
        raise
    except Exception as exc:
        raise PassError(
            f"fusion pass {name!r} crashed{where_in_your_code(exc)}: "
            f"{type(exc).__name__}: {exc}. Fix the pass so that it returns a Partition"
        ) from exc
    if not isinstance(partition, Partition):
        hint = " (did you forget `return`?)" if partition is None else ""
        raise PassError(
            f"fusion pass {name!r} returned {type(partition).__name__}{hint}; "
            "it must return a Partition"
        )
    try:
        validate_partition(graph, partition)
    except PartitionError as exc:
        raise PartitionError(f"fusion pass {name!r} returned an invalid partition: {exc}") from exc
    if chip.sm.count:  # a GPU: no kernel may wait for all the blocks of an earlier step
        _check_grid_dependencies(name, graph, partition, chip)
    return partition.with_graph(graph)


def _check_grid_dependencies(name: str, graph: Graph, partition: Partition, chip: Chip) -> None:
    """Raise :class:`PartitionError` for the first group one GPU kernel cannot run (see
    :func:`~chipsim.codegen.feasibility.grid_dependency`), naming the two nodes."""
    names = graph.names()
    for k, group in enumerate(partition.groups):
        pair = grid_dependency(graph, group)
        if pair is None:
            continue
        made, reader = (graph.nodes[i] for i in pair)
        raise PartitionError(
            f"fusion pass {name!r} put {names[reader.output]} = {reader.op}(...) in one kernel "
            f"with {names[made.output]} = {made.op}(...), which it reads (group {k}: nodes "
            f"{list(group)}). On {chip.name!r}, a GPU, a kernel runs as thread blocks spread "
            f"over the SMs, and each block of {reader.op} would need parts of "
            f"{names[made.output]} that other blocks make: a wait for every block, which one "
            f"kernel cannot do. Put the two nodes in different groups."
        )
