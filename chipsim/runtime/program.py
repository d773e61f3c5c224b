"""A compiled :class:`Program`: kernels, memory layout and instructions for one chip.

Made by :func:`chipsim.compile`, whose ``codegen`` stage lowers the graph
(:func:`chipsim.codegen.link.link`: layout, kernels, instructions); the program only runs
them. Calling it runs the instructions on a fresh simulator (functional mode) and returns the
outputs; :attr:`Program.report` is the cost of a run, which does not depend on the input
values (so it is computed once, in timing-only mode).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.codegen.link import Linked, operand
from chipsim.hw.chip import Chip
from chipsim.hw.simulator import Simulator
from chipsim.ir.graph import Graph
from chipsim.ir.interpreter import bind_inputs
from chipsim.passes.fusion import Partition
from chipsim.passes.memory import MemoryPlan
from chipsim.passes.placement import Placement
from chipsim.runtime.report import Report
from chipsim.target import Level


class Program:
    """A graph compiled for a chip: call it with arrays to run it on the simulator.

    Attributes:
        graph: the (simplified) graph that was compiled.
        chip: the target chip.
        partition: the fusion partition (one group per kernel).
        plan: the memory plan of the activations passed between kernels.
        placement: the memory level of every tensor (print it: W in DRAM, x in SRAM, ...).
        locations: the address of every tensor kept between kernels.
        kernels: one ``KernelSpec`` per group, in run order.
        instructions: the whole program, kernel after kernel.
    """

    def __init__(
        self,
        graph: Graph,
        chip: Chip,
        partition: Partition,
        plan: MemoryPlan,
        placement: Placement,
        linked: Linked,
    ) -> None:
        self.graph, self.chip, self.partition = graph, chip, partition
        # a kernel in spill mode keeps its intermediates in DRAM scratch, not in tile buffers
        scratch = {
            n.output
            for k in linked.kernels
            if k.scratch is not None
            for n in k.nodes
            if not n.is_constant and n.output not in k.outputs
        }
        self.plan = plan
        self.placement = dataclasses.replace(placement, in_scratch=frozenset(scratch))
        self.locations = linked.locations
        self.kernels = linked.kernels
        self.instructions = linked.instructions
        self._spans = linked.spans
        self._host_inputs = linked.host_inputs

    # -- running ------------------------------------------------------------------------------
    def _simulator(self, args: Sequence[Any], functional: bool) -> Simulator:
        sim = Simulator(self.chip, functional=functional)
        if functional:
            env = bind_inputs(self.graph, tuple(args))
            names = self.graph.names()
            for node in self.graph.nodes:
                where = self.locations.get(node.output)
                if node.is_constant and where is not None:
                    sim.memory[where.level].write(
                        operand(where, node.output, names[node.output]),
                        node.attrs["value"].array(),
                    )
            for v, where in self._host_inputs.items():
                sim.memory[Level.DRAM].write(operand(where, v, names[v]), env[v])
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
                outs.append(sim.memory[where.level].read(operand(where, v, names[v])))
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
