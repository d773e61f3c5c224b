"""``chipsim.compile``: a static graph through the passes to a program for a chip.

The pipeline, one box each (see :data:`PIPELINE`)::

    trace -> simplify -> fuse -> kernel liveness -> plan memory -> place -> generate code

Each box can be read on its own; the learner's fusion pass or memory planner replaces
exactly one of them.

Example:
    >>> import numpy as np, chipsim as cs
    >>> prog = cs.compile(lambda x: (x + 1) * 2, np.zeros(1024, np.float32))
    >>> [k.name for k in prog.kernels]
    ['fused_add_mul']
    >>> prog(np.full(1024, 3.0, np.float32))[:2]
    array([8., 8.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.lower import lower, plan_kernel
from chipsim.errors import ChipsimError, PassError
from chipsim.frontend.tracing import trace
from chipsim.hw.chip import Chip, get_chip
from chipsim.hw.simulator import Simulator
from chipsim.i18n import N_
from chipsim.ir.graph import Graph, Value
from chipsim.ir.verify import verify
from chipsim.passes.fusion import Partition, get_fusion, reference_fusion, validate_partition
from chipsim.passes.memory import MemoryPlan, UsageRecord, get_planner, validate_plan
from chipsim.passes.memory.liveness import records_from_uses
from chipsim.passes.placement import arena_budget, place, place_group
from chipsim.passes.simplify import simplify as simplify_graph

#: The compiler's boxes, in order: (name, what it does). The book draws this list.
#: The descriptions are marked with ``N_`` for the translation catalogue (show them with ``tr``).
PIPELINE = (
    ("trace", N_("run the Python function on symbolic tensors: a static graph")),
    ("simplify", N_("fold constants, merge common subexpressions, drop dead code")),
    ("fuse", N_("partition the ops into kernels (operator fusion)")),
    ("liveness", N_("when is each tensor passed between kernels alive?")),
    ("plan memory", N_("give every such tensor an offset in one arena, reusing dead space")),
    ("place", N_("choose DRAM, SRAM or registers for every tensor")),
    ("codegen", N_("instructions per kernel: tiles, DMA, the right unit for each op")),
)


def kernel_records(graph: Graph, partition: Partition) -> tuple[list[UsageRecord], list[Value]]:
    """Usage records of the activations a compiled program keeps between kernels.

    Step 0 loads the graph inputs; step ``k + 1`` runs kernel ``k`` of ``partition``.
    Planned tensors: graph inputs read by a kernel, and values one kernel produces and a
    later kernel reads. Graph outputs go to DRAM and constants are weights, so neither is
    planned. Lifetimes follow :data:`chipsim.passes.memory.INTERVAL_CONVENTION`.

    Returns:
        The records (ids are the values' print names) and the planned values, in order.
    """
    names = graph.names()
    group_of = {i: g for g, group in enumerate(partition.groups) for i in group}
    producer_step = {graph.nodes[i].output: g + 1 for i, g in group_of.items()}
    uses: dict[Value, list[int]] = {}
    for i, node in enumerate(graph.nodes):
        if i not in group_of:
            continue
        for v in node.inputs:
            if producer_step.get(v) != group_of[i] + 1:  # read from outside its own kernel
                uses.setdefault(v, []).append(group_of[i] + 1)
    outputs = set(graph.outputs)
    planned = [v for v in graph.inputs if v in uses and v not in outputs]
    planned += [
        graph.nodes[i].output
        for i in sorted(group_of)
        if graph.nodes[i].output in uses and graph.nodes[i].output not in outputs
    ]
    born = {v: 0 for v in graph.inputs} | producer_step
    tensors = [(names[v], v.type.nbytes, born[v], uses[v], False) for v in planned]
    return records_from_uses(tensors, len(partition.groups) + 1), planned


def _group_spec(graph: Graph, chip: Chip, group: Sequence[int], *, on_chip: bool) -> KernelSpec:
    """The :class:`KernelSpec` of one group, laid out as a compiled program would (about).

    The memory plan is not known while fusing, so the layout is a stand-in: weights and graph
    outputs in DRAM, tile scratch above the activation arena (the kernels' SRAM window) and
    spilled intermediates in a DRAM scratch area. With ``on_chip`` the activations the kernel
    reads or writes (graph inputs, values passed between kernels) sit in the SRAM arena while
    they fit there, small constants in registers, as placement puts them; without it every
    tensor is in DRAM (the most pessimistic layout, enough to ask "does it spill?").
    """
    users, outputs = graph.users(), set(graph.outputs)
    window = (arena_budget(chip), chip.sram.capacity_bytes)
    nodes = [graph.nodes[i] for i in group]
    inside = set(nodes)
    outs = [
        n.output
        for n in nodes
        if n.output in outputs or any(u not in inside for u in users[n.output])
    ]
    spec = KernelSpec.of(nodes, outs, {})
    homes, dram = place_group(graph, chip, (*spec.inputs, *spec.outputs), on_chip=on_chip)
    where = {v: Location(level, offset) for v, (level, offset) in homes.items()}
    return KernelSpec(
        spec.name, spec.nodes, spec.inputs, spec.outputs, where, window, Location("dram", dram)
    )


def codegen_feasible(graph: Graph, chip: Chip) -> Callable[[Sequence[int]], bool]:
    """A check for the reference fusion pass: can the code generator run this group of ops
    as one kernel without spilling its tiles to DRAM?

    The fusion pass only knows the IR and a capacity estimate; the compiler, which also knows
    the code generator, hands it this sharper check. (A learner's pass is not given it: over-
    fusion must cost the learner, as it costs a real compiler writer.)
    """

    def feasible(group: Sequence[int]) -> bool:
        spec = _group_spec(graph, chip, group, on_chip=False)
        return plan_kernel(spec, chip).mode != "spill"

    return feasible


def codegen_kernel_cycles(graph: Graph, chip: Chip) -> Callable[[Sequence[int]], int | None]:
    """Measured kernel costs for the reference fusion pass, like an autotuner's.

    Returns a function ``group -> cycles``: the group (node indices) is lowered by the code
    generator exactly as :func:`codegen_feasible` plans it, but with the activations in the
    SRAM arena where they would fit (see :func:`_group_spec`), and run alone on a fresh
    timing-only :class:`~chipsim.hw.Simulator`. Kernels of a program run in stream order and
    the host queues the next launch while a kernel runs, so a kernel costs the program about
    ``max(launch, body)``: that is what is returned. Each group is measured once (memoised); a
    group the stand-in layout cannot run gives ``None`` and the pass falls back to its estimate
    for it.
    """
    launch = chip.launch.graph_cycles
    memo: dict[tuple[int, ...], int | None] = {}

    def kernel_cycles(group: Sequence[int]) -> int | None:
        key = tuple(group)
        if key not in memo:
            spec = _group_spec(graph, chip, key, on_chip=True)
            sim = Simulator(chip, functional=False)
            try:
                sim.run(lower(spec, chip, launch="graph"))
            except ChipsimError:
                # e.g. its spill scratch does not fit this stand-in layout: the pass then
                # falls back to its own estimate for this group
                memo[key] = None
            else:
                memo[key] = max(sim.cycles - launch, launch)
        return memo[key]

    return kernel_cycles


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


def compile(  # noqa: A001 - the public name the course uses
    fn_or_graph: Callable[..., Any] | Graph,
    *example_inputs: Any,
    chip: str | Chip = "edge-npu",
    fusion: str | Callable[..., Partition] | None = "reference",
    planner: str | Callable[..., MemoryPlan] | None = "greedy_by_size",
    simplify: bool = True,
    double_buffer: bool = True,
) -> Any:
    """Compile a function or graph for a simulated chip; returns a :class:`Program`.

    Args:
        fn_or_graph: a function of tensors (traced with ``example_inputs``) or a Graph.
        *example_inputs: arrays giving the shapes and dtypes of the function's arguments.
        chip: a preset name (see :func:`chipsim.chips`) or a :class:`Chip`.
        fusion: ``"reference"``, ``"none"``, ``None`` (no fusion) or a callable
            ``fusion(graph, chip) -> Partition`` (e.g. yours).
        planner: ``"greedy_by_size"``, ``"first_fit"``, ``"search"``, ``"naive"``, ``None``
            (no reuse) or a callable ``planner(records, *, alignment) -> MemoryPlan``.
        simplify: run constant folding, CSE and DCE first.
        double_buffer: let DMA fill one tile buffer while the units compute on the other.
    """
    from chipsim.runtime.program import Program

    target = get_chip(chip)
    if isinstance(fn_or_graph, Graph):
        graph = verify(fn_or_graph)
    else:
        graph = trace(fn_or_graph, *example_inputs)
    if simplify:
        graph = simplify_graph(graph)
    fuse = get_fusion(fusion)
    if fuse is reference_fusion:
        partition = fuse(
            graph,
            target,
            feasible=codegen_feasible(graph, target),
            kernel_cycles=codegen_kernel_cycles(graph, target),
        )
    else:
        partition = fuse(graph, target)
    if not isinstance(partition, Partition):
        raise PassError(
            f"the fusion pass returned {type(partition).__name__}; it must return a Partition"
        )
    validate_partition(graph, partition)
    partition = partition.with_graph(graph)
    records, planned = kernel_records(graph, partition)
    plan = _check_plan(get_planner(planner or "naive")(records), records)
    offsets = {v: plan.offsets[r.id] for v, r in zip(planned, records)}
    placement = place(graph, offsets, plan.arena_size, target)
    return Program(graph, target, partition, plan, placement, double_buffer=double_buffer)
