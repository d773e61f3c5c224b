"""A compiled :class:`Program`: kernels, memory layout and instructions for one chip.

Made by :func:`chipsim.compile`. Calling it runs the instructions on a fresh simulator
(functional mode) and returns the outputs; :attr:`Program.report` is the cost of a run,
which does not depend on the input values (so it is computed once, in timing-only mode).

Memory layout:

* **DRAM**: weights, then the graph inputs, then the outputs, then the spilled part of the
  activation arena, then scratch for kernels that spill their tiles.
* **SRAM**: the activation arena at ``[0, arena budget)``, tile scratch for the kernels above
  it (``KernelSpec.sram_window``).
* **registers**: small constants (a bias), loaded before the first kernel.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.lower import lower
from chipsim.codegen.planning import scratch_bytes
from chipsim.errors import ExecutionError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand
from chipsim.hw.simulator import Simulator
from chipsim.ir.graph import Graph, Value
from chipsim.ir.interpreter import bind_inputs
from chipsim.passes.fusion import Partition
from chipsim.passes.fusion.naming import unique_kernel_names
from chipsim.passes.memory import MemoryPlan
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN, DRAM, SRAM, Placement, check_capacity
from chipsim.runtime.report import KernelSpan, Report


def _operand(loc: Location, v: Value, name: str) -> Operand:
    return Operand(loc.level, loc.offset, v.shape, v.dtype.name, None, name)


class Program:
    """A graph compiled for a chip: call it with arrays to run it on the simulator.

    Attributes:
        graph: the (simplified) graph that was compiled.
        chip: the target chip.
        partition: the fusion partition (one group per kernel).
        plan: the memory plan of the activations passed between kernels.
        placement: the memory level of every tensor (print it: W in DRAM, x in SRAM, ...).
        kernels: one :class:`KernelSpec` per group, in run order.
        instructions: the whole program, kernel after kernel.
    """

    def __init__(
        self,
        graph: Graph,
        chip: Chip,
        partition: Partition,
        plan: MemoryPlan,
        placement: Placement,
        *,
        double_buffer: bool = True,
    ) -> None:
        self.graph, self.chip, self.partition = graph, chip, partition
        self.plan, self.placement = plan, placement
        self.locations = self._layout()
        self.kernels = self._kernels()
        self.instructions: list[Instr] = []
        self._spans: list[KernelSpan] = []
        self._emit_input_loads()
        for kernel in self.kernels:
            first = len(self.instructions)
            self.instructions += lower(kernel, chip, double_buffer=double_buffer, launch="graph")
            self._spans.append(KernelSpan(kernel.name, first, len(self.instructions)))

    # -- layout -------------------------------------------------------------------------------
    def _layout(self) -> dict[Value, Location]:
        """The address of every tensor the program keeps between kernels, as placed."""
        loc = {v: Location(slot.level, slot.offset) for v, slot in self.placement.slots.items()}
        self._host_inputs = {v: Location(DRAM, a) for v, a in self.placement.host_inputs.items()}
        for v in self.graph.inputs:
            if loc[v].level == DRAM:  # read where the host wrote it
                loc[v] = self._host_inputs[v]
        self._scratch_base = self.placement.dram_bytes
        return loc

    def _kernels(self) -> list[KernelSpec]:
        graph = self.graph
        # Kernels may use every byte of SRAM the placed activations leave free.
        sram_used = max(
            (loc.offset + v.type.nbytes for v, loc in self.locations.items() if loc.level == SRAM),
            default=0,
        )
        window = (align_up(sram_used, ALIGN), self.chip.sram.capacity_bytes)
        kernels = []
        for group in self.partition.groups:
            spec = KernelSpec.of_group(graph, group, {})
            where = {
                v: self.locations[v] for v in (*spec.inputs, *spec.outputs) if v in self.locations
            }
            missing = [v for v in spec.outputs if v not in where]
            if missing:
                raise ExecutionError(
                    f"kernel {spec.name}: no memory for {missing[0]}; this is a compiler bug"
                )
            spec = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, where, window)
            need = scratch_bytes(spec, self.chip)
            if need:
                check_capacity(
                    DRAM,
                    self.chip.dram.capacity_bytes,
                    [("the program's tensors", self._scratch_base), (f"{spec.name} scratch", need)],
                    f"kernel {spec.name} of {self.graph.name!r}",
                )
                spec = KernelSpec(
                    spec.name,
                    spec.nodes,
                    spec.inputs,
                    spec.outputs,
                    where,
                    window,
                    Location(DRAM, self._scratch_base),
                )
            kernels.append(spec)
        # unique, readable names: fused_add_relu, fused_add_relu_1 (the one naming rule)
        names = unique_kernel_names(graph, self.partition.groups)
        kernels = [dataclasses.replace(k, name=n) for k, n in zip(kernels, names, strict=True)]
        return kernels

    def _emit_input_loads(self) -> None:
        """Copy the graph inputs that live on chip from where the host wrote them (DRAM)."""
        names = self.graph.names()
        first = len(self.instructions)
        for v, host in self._host_inputs.items():
            target = self.locations.get(v)
            if target is not None and target != host:
                src, dst = _operand(host, v, names[v]), _operand(target, v, names[v])
                self.instructions.append(
                    dma("load", src, dst, "load_inputs", f"load input {names[v]}")
                )
        if len(self.instructions) > first:
            self._spans.append(KernelSpan("load_inputs", first, len(self.instructions)))

    # -- running ------------------------------------------------------------------------------
    def _simulator(self, args: Sequence[Any], functional: bool) -> Simulator:
        sim = Simulator(self.chip, functional=functional)
        if functional:
            env = bind_inputs(self.graph, tuple(args))
            names = self.graph.names()
            for node in self.graph.nodes:
                where = self.locations.get(node.output)
                if node.op == "constant" and where is not None:
                    sim.memory[where.level].write(
                        _operand(where, node.output, names[node.output]),
                        node.attrs["value"].array(),
                    )
            for v, where in self._host_inputs.items():
                sim.memory["dram"].write(_operand(where, v, names[v]), env[v])
        return sim

    def run(self, *args: Any, functional: bool = True) -> tuple[list[np.ndarray], Report]:
        """Run on a fresh simulator; return (outputs, report). ``functional=False`` skips
        the numpy work and returns no outputs (the report is identical)."""
        sim = self._simulator(args, functional)
        sim.run(self.instructions)
        report = Report.from_records(self.chip, sim.records, self._spans)
        if not functional:
            return [], report
        names = self.graph.names()
        env = bind_inputs(self.graph, tuple(args))
        outs = []
        for v in self.graph.outputs:
            where = self.locations.get(v) or self._host_inputs.get(v)
            if where is None:  # an output that is an input: nothing ran
                outs.append(env[v])
            else:
                outs.append(sim.memory[where.level].read(_operand(where, v, names[v])))
        return outs, report

    def __call__(self, *args: Any) -> Any:
        """Run the program on ``args`` (numpy arrays); returns the output(s)."""
        outs, _ = self.run(*args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    @functools.cached_property
    def report(self) -> Report:
        """The cost of one run (cycles do not depend on the input values)."""
        return self.run(
            *[np.zeros(v.shape, v.dtype.numpy) for v in self.graph.inputs], functional=False
        )[1]

    @property
    def cycles(self) -> int:
        return self.report.cycles

    def __repr__(self) -> str:
        return (
            f"<Program {self.graph.name} on {self.chip.name}: {len(self.kernels)} kernels, "
            f"{len(self.instructions)} instructions>"
        )

    def summary(self) -> str:
        """Kernels, memory plan and placement as text."""
        lines = [repr(self), "", "kernels:"]
        lines += [f"  {k.name}" for k in self.kernels]
        lines += ["", str(self.plan), "", str(self.placement)]
        return "\n".join(lines)
