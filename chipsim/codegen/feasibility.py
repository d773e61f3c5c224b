"""Can the code generator run a group of ops as one kernel, and how long does it take alone?

These are the two questions a fusion pass asks the code generator, answered by the code
generator itself, so that no second copy of its rules exists:

* :func:`kernel_fits` — the **one capacity rule** of fusion: a group fits when the code
  generator plans it without spilling tiles to DRAM (row tiles, or blocks of a contraction
  with its epilogue; see :func:`~chipsim.codegen.planning.plan_kernel`). A matmul whose weight is
  larger than SRAM still fits: the blocked kernel streams the weight in blocks. On a chip
  built of streaming multiprocessors (a GPU: ``chip.sm.count > 0``) a group must also hold
  no grid-wide dependency (:func:`grid_dependency`).
* :func:`kernel_timer` — a group lowered and run alone on a timing-only simulator, as an
  autotuner times candidate kernels instead of trusting a formula.

The memory plan is not known while fusing, so both use a stand-in layout
(:func:`stand_in_spec`).

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.hw import get_chip
    >>> import numpy as np
    >>> b = GraphBuilder()
    >>> x = b.input((256, 512), f32)
    >>> w = b.const(np.zeros((512, 512), np.float32))  # 1 MiB: more than edge-npu's SRAM
    >>> bias = b.const(np.zeros(512, np.float32))
    >>> g = b.build(b.op("relu", b.op("add", b.op("matmul", x, w), bias)))
    >>> fits = kernel_fits(g, get_chip("edge-npu"))
    >>> [n.op for n in g.nodes]
    ['constant', 'constant', 'matmul', 'add', 'relu']
    >>> fits([2, 3, 4])  # matmul + bias + relu: blocked, no spill
    True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.lower import lower
from chipsim.codegen.planning import plan_kernel
from chipsim.codegen.streaming import stand_in, worth_streaming
from chipsim.errors import ChipsimError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Operand
from chipsim.hw.simulator import Simulator
from chipsim.ir.graph import Graph, Value
from chipsim.ir.ops import Pattern, get_op
from chipsim.passes.placement import arena_budget, place_group
from chipsim.target import Level

Group = Sequence[int]
T = TypeVar("T")


def stand_in_spec(graph: Graph, chip: Chip, group: Group, *, on_chip: bool) -> KernelSpec:
    """The :class:`KernelSpec` of one group, laid out as a compiled program would (about).

    Its inputs and outputs where placement's stand-in puts them
    (:func:`~chipsim.passes.placement.place_group`; with ``on_chip`` false, all in DRAM: "does
    it spill?"), tile scratch above the activation arena (the kernels' SRAM window), spilled
    intermediates in a DRAM scratch area.
    """
    if on_chip:  # as in the program: graph inputs worth streaming stay in DRAM
        return stand_in(graph, group, chip, worth_streaming(graph, group, chip, graph.inputs))
    window = (arena_budget(chip), chip.sram.capacity_bytes)
    spec = KernelSpec.of_group(graph, group, {})
    homes, dram = place_group(graph, chip, (*spec.inputs, *spec.outputs), on_chip=False)
    where = {v: Location(level, offset) for v, (level, offset) in homes.items()}
    return KernelSpec(
        spec.name, spec.nodes, spec.inputs, spec.outputs, where, window, Location(Level.DRAM, dram)
    )


#: How a value made inside a kernel is cut among the kernel's blocks (see grid_dependency).
FREE, ROWS, TILES = "free", "rows", "tiles"
_PER_ELEMENT = (Pattern.ELEMENTWISE, Pattern.BROADCAST, Pattern.INJECTIVE)


def grid_dependency(graph: Graph, group: Group) -> tuple[int, int] | None:
    """The first ``(producer, consumer)`` pair of ``group`` that one GPU kernel cannot hold,
    or None when the group has none.

    A GPU kernel runs as thread blocks, spread over the SMs, each computing one block of the
    output; a block cannot wait until *every* other block has finished (that would need a
    grid-wide barrier). So an op may read a value made inside the kernel only where each block
    makes the part it needs itself. A value made inside the kernel is

    * ``free`` if made by per-element ops (elementwise, broadcast, injective) from the kernel's
      inputs: a block computes exactly the elements it needs;
    * ``rows`` if a reduction made it (or it follows one): blocks hold whole rows;
    * ``tiles`` if a contraction made it (or its epilogue): blocks hold tiles of rows *and*
      columns.

    A consumer inside the kernel breaks the rule when it is a contraction (matmul, conv: one
    block of its output needs whole rows or columns of the operand, made by other blocks), or
    when it reads a ``rows`` or ``tiles`` value across rows (its op's row rule,
    :attr:`~chipsim.ir.ops.OpDef.rows`: a transpose, a reduction over rows, a value needed
    whole), or when a reduction reads a ``tiles`` value (a row spans several column tiles).
    Elementwise chains, contraction epilogues and row-wise reductions (softmax, layernorm)
    with their elementwise neighbours pass.
    """
    made: dict[Value, int] = {graph.nodes[i].output: i for i in group}
    kind: dict[Value, str] = {}
    for c in sorted(group):
        node = graph.nodes[c]
        opdef = get_op(node.op)
        inside = [(j, v) for j, v in enumerate(node.inputs) if v in made]
        flags = opdef.row_inputs([v.type for v in node.inputs], node.type, node.attrs)
        for j, v in inside:
            crosses = kind[v] != FREE and (flags is None or not flags[j])
            whole_rows = kind[v] == TILES and opdef.pattern == Pattern.REDUCTION
            if opdef.pattern == Pattern.CONTRACTION or crosses or whole_rows:
                return made[v], c
        kinds = {kind[v] for _, v in inside}
        if opdef.pattern == Pattern.CONTRACTION or TILES in kinds:
            kind[node.output] = TILES
        elif opdef.pattern in _PER_ELEMENT and kinds <= {FREE}:
            kind[node.output] = FREE
        else:
            kind[node.output] = ROWS
    return None


def kernel_fits(graph: Graph, chip: Chip) -> Callable[[Group], bool]:
    """The capacity rule: ``fits(group)`` is True when the code generator runs the group
    (node indices) as one kernel without spilling its tiles to DRAM, and, on a chip of SMs,
    the group has no grid-wide dependency (:func:`grid_dependency`). Memoised per group
    and, across groups, per :meth:`KernelSpec.signature
    <chipsim.codegen.kernel.KernelSpec.signature>` (a model's repeated layers are planned
    once)."""
    gpu = chip.sm.count > 0
    plans_whole = _per_kernel(
        graph, chip, on_chip=False, answer=lambda spec: plan_kernel(spec, chip).mode != "spill"
    )

    def fits(group: Group) -> bool:
        if gpu and grid_dependency(graph, group) is not None:
            return False
        return plans_whole(group)

    return fits


def kernel_timer(graph: Graph, chip: Chip) -> Callable[[Group], int | None]:
    """Measured kernel costs, like an autotuner's: ``cycles(group)``.

    The group is lowered with the activations in the SRAM arena where they would fit (see
    :func:`stand_in_spec`) and run alone on a fresh timing-only
    :class:`~chipsim.hw.Simulator`; on a chip with an L2 cache its inputs made by other
    kernels start in the cache (:meth:`~chipsim.hw.Simulator.warm`), as in the program.
    Kernels of a program run in stream order and the host queues the next launch while a
    kernel runs, so a kernel costs the program about
    ``max(launch, body)``: that is what is returned. Memoised per group; a group the stand-in
    layout cannot run gives ``None`` (the search then falls back to its estimate).

    Measuring is most of the fusion search's time, so the measurements are also memoised per
    kernel signature (a model's repeated layers are measured once; see :func:`_per_kernel`).
    """
    launch = chip.launch.graph_cycles

    producer = graph.producer()

    def made(spec: KernelSpec) -> tuple[bool, ...]:
        """Which inputs an earlier kernel made (not constants, not the host's inputs)."""
        return tuple(v in producer and not producer[v].is_constant for v in spec.inputs)

    def measure(spec: KernelSpec) -> int | None:
        sim = Simulator(chip, functional=False)
        # on a chip with an L2, the kernels before this one have just written these there
        sim.warm(
            Operand(w.level, w.offset, v.type.shape, v.type.dtype.name)
            for v, warm in zip(spec.inputs, made(spec), strict=True)
            if warm and (w := spec.location.get(v)) is not None
        )
        try:
            sim.run(lower(spec, chip, launch="graph"))
        except ChipsimError:
            return None  # e.g. its spill scratch does not fit the stand-in layout
        return max(sim.cycles - launch, launch)

    warmth = made if chip.l2.present else None
    return _per_kernel(graph, chip, on_chip=True, answer=measure, also=warmth)


def _per_kernel(
    graph: Graph,
    chip: Chip,
    *,
    on_chip: bool,
    answer: Callable[[KernelSpec], T],
    also: Callable[[KernelSpec], Hashable] | None = None,
) -> Callable[[Group], T]:
    """``answer`` about a group's stand-in kernel, memoised per group and, across groups, per
    :meth:`KernelSpec.signature <chipsim.codegen.kernel.KernelSpec.signature>`: a kernel of
    layer 7 that looks to the code generator exactly like one of layer 1 (same ops, shapes,
    stand-in layout) is not planned or measured again. ``also`` adds what else ``answer``
    reads of the spec to the key."""
    by_group: dict[tuple[int, ...], T] = {}
    by_signature: dict[Hashable, T] = {}

    def ask(group: Group) -> T:
        key = tuple(sorted(group))
        if key not in by_group:
            spec = stand_in_spec(graph, chip, key, on_chip=on_chip)
            same = (spec.signature(), also(spec) if also else None)
            if same not in by_signature:
                by_signature[same] = answer(spec)
            by_group[key] = by_signature[same]
        return by_group[key]

    return ask
