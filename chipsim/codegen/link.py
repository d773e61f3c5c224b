"""Lower a whole compiled graph: lay out its kernels and emit their instructions, in order.

What ``chipsim.compile``'s ``codegen`` stage runs. It takes the passes' decisions — the
partition (one group per kernel), the memory plan and the placement — and produces a
:class:`Linked` program: the address of every tensor kept between kernels, one
:class:`~chipsim.codegen.kernel.KernelSpec` per group, and the instructions of all of them
(each kernel lowered by :func:`~chipsim.codegen.lower.lower`, as eager mode lowers one op).
The runtime's :class:`~chipsim.runtime.program.Program` only runs them.

Memory layout:

* **DRAM**: weights, then the graph inputs, then the outputs, then the spilled part of the
  activation arena, then scratch for kernels that spill their tiles.
* **SRAM**: the activation arena at ``[0, arena budget)``, tile scratch for the kernels above
  it (``KernelSpec.sram_window``).
* **registers**: small constants (a bias), loaded before the first kernel.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpan, KernelSpec, Location
from chipsim.codegen.lower import lower
from chipsim.codegen.planning import scratch_bytes
from chipsim.errors import ExecutionError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand
from chipsim.i18n import tr
from chipsim.ir.graph import Graph, Value
from chipsim.passes.fusion import Partition
from chipsim.passes.fusion.naming import unique_kernel_names
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN, DRAM, SRAM, Placement, check_dram


def operand(loc: Location, v: Value, name: str) -> Operand:
    """The instruction operand of tensor ``v`` at ``loc``."""
    return Operand(loc.level, loc.offset, v.shape, v.dtype.name, None, name)


@dataclass(frozen=True)
class Linked:
    """A graph's instructions for one chip, and where its tensors live.

    Attributes:
        locations: the address of every tensor kept between kernels, as placed.
        host_inputs: where the host writes each graph input (DRAM).
        kernels: one :class:`KernelSpec` per group, in run order.
        instructions: the whole program, kernel after kernel.
        spans: which instructions belong to which kernel (and the input loads).
    """

    locations: dict[Value, Location]
    host_inputs: dict[Value, Location]
    kernels: list[KernelSpec]
    instructions: list[Instr]
    spans: list[KernelSpan]


def link(
    graph: Graph,
    chip: Chip,
    partition: Partition,
    placement: Placement,
    *,
    double_buffer: bool = True,
) -> Linked:
    """Lay out and lower every kernel of ``partition`` (see the module docstring)."""
    locations, host_inputs = _layout(graph, placement)
    kernels = _kernels(graph, chip, partition, locations, placement.dram_bytes)
    instructions, spans = _input_loads(graph, locations, host_inputs)
    for kernel in kernels:
        first = len(instructions)
        instructions += _lowered(kernel, chip, double_buffer)
        spans.append(KernelSpan(kernel.name, first, len(instructions)))
    return Linked(locations, host_inputs, kernels, instructions, spans)


def _layout(
    graph: Graph, placement: Placement
) -> tuple[dict[Value, Location], dict[Value, Location]]:
    """The address of every tensor the program keeps between kernels, as placed."""
    loc = {v: Location(slot.level, slot.offset) for v, slot in placement.slots.items()}
    host_inputs = {v: Location(DRAM, a) for v, a in placement.host_inputs.items()}
    for v in graph.inputs:
        if loc[v].level == DRAM:  # read where the host wrote it
            loc[v] = host_inputs[v]
    return loc, host_inputs


def _kernels(
    graph: Graph,
    chip: Chip,
    partition: Partition,
    locations: dict[Value, Location],
    scratch_base: int,
) -> list[KernelSpec]:
    # Kernels may use every byte of SRAM the placed activations leave free.
    sram_used = max(
        (loc.offset + v.type.nbytes for v, loc in locations.items() if loc.level == SRAM),
        default=0,
    )
    window = (align_up(sram_used, ALIGN), chip.sram.capacity_bytes)
    kernels = []
    for group in partition.groups:
        spec = KernelSpec.of_group(graph, group, {})
        where = {v: locations[v] for v in (*spec.inputs, *spec.outputs) if v in locations}
        missing = [v for v in spec.outputs if v not in where]
        if missing:
            raise ExecutionError(
                f"kernel {spec.name}: no memory for {missing[0]}; this is a compiler bug"
            )
        spec = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, where, window)
        need = _remembered(("scratch", _identity(spec), chip), scratch_bytes, spec, chip)
        if need:
            check_dram(
                chip.dram.capacity_bytes,
                [
                    (tr("the program's tensors"), scratch_base),
                    (tr("{kernel}'s scratch", kernel=spec.name), need),
                ],
                tr("kernel {kernel} of {name!r}", kernel=spec.name, name=graph.name),
            )
            spec = KernelSpec(
                spec.name,
                spec.nodes,
                spec.inputs,
                spec.outputs,
                where,
                window,
                Location(DRAM, scratch_base),
            )
        kernels.append(spec)
    # unique, readable names: fused_add_relu, fused_add_relu_1 (the one naming rule)
    names = unique_kernel_names(graph, partition.groups)
    return [dataclasses.replace(k, name=n) for k, n in zip(kernels, names, strict=True)]


# A memo of each kernel's lowering and scratch need, both pure functions of what their keys
# hold. A fusion search compiles the whole graph for every partition it tries, and a step
# changes one or two of its kernels: the others are lowered again exactly as before (77-87% of
# a transformer block's lowerings in the fusion challenge's search, measured by
# ``benchmarks/lowering_reuse.py``). The key holds the kernel's nodes and values themselves
# (they compare by identity), so a hit is the same kernel of the same graph at the same
# addresses, and returns exactly what lowering it again would. Instructions are immutable, so
# programs share them. Bounded by the instructions it holds (about 100 MB at most); when full
# it starts again empty, as :data:`chipsim.codegen.block_sizes._CHOSEN` does.
_LINKED: dict[Hashable, Any] = {}
_LINKED_LIMIT = 200_000  # instructions (a scratch need counts as one)
_linked_size = 0


def forget() -> None:
    """Empty the memo (for a caller that must see all the work each compile does, e.g. a
    test tracing which functions a call runs)."""
    global _linked_size
    _LINKED.clear()
    _linked_size = 0


def _identity(spec: KernelSpec) -> tuple:
    """Everything :func:`lower` reads of ``spec`` but its name and DRAM scratch."""
    return (spec.nodes, spec.inputs, spec.outputs, tuple(spec.location.items()), spec.sram_window)


def _remembered(key: Hashable, make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)``, remembered under ``key`` (see above)."""
    global _linked_size
    if key not in _LINKED:
        made = make(*args)
        size = len(made) if isinstance(made, tuple) else 1
        if _linked_size + size > _LINKED_LIMIT:
            _LINKED.clear()
            _linked_size = 0
        _LINKED[key] = made
        _linked_size += size
    return _LINKED[key]


def _lowered(kernel: KernelSpec, chip: Chip, double_buffer: bool) -> tuple[Instr, ...]:
    """``kernel``'s instructions in a graph launch, remembered (see above)."""
    key = ("lowered", _identity(kernel), kernel.name, kernel.scratch, chip, double_buffer)
    return _remembered(key, _lower_graph, kernel, chip, double_buffer)


def _lower_graph(kernel: KernelSpec, chip: Chip, double_buffer: bool) -> tuple[Instr, ...]:
    return tuple(lower(kernel, chip, double_buffer=double_buffer, launch="graph"))


def _input_loads(
    graph: Graph, locations: dict[Value, Location], host_inputs: dict[Value, Location]
) -> tuple[list[Instr], list[KernelSpan]]:
    """Copy the graph inputs that live on chip from where the host wrote them (DRAM)."""
    names = graph.names()
    instructions: list[Instr] = []
    for v, host in host_inputs.items():
        target = locations.get(v)
        if target is not None and target != host:
            src, dst = operand(host, v, names[v]), operand(target, v, names[v])
            instructions.append(dma("load", src, dst, "load_inputs", f"load input {names[v]}"))
    spans = [KernelSpan("load_inputs", 0, len(instructions))] if instructions else []
    return instructions, spans
