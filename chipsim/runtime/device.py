"""The simulated chip as an eager device: every op is one kernel, memory is dynamic.

What one eager op costs here, as on a GPU driven from PyTorch:

1. a kernel launch (eager dispatch overhead, e.g. ~5 us on a datacenter GPU);
2. DMA of the inputs from DRAM to SRAM, compute on the right unit, DMA of the result back;
3. a DRAM block for the result from a caching allocator (:mod:`chipsim.hw.allocator`),
   freed when the Python tensor dies (reference counting drives frees).

Launches are asynchronous: the host queues kernel after kernel, and only ``download``
(``tensor.numpy()``) waits for the chip. So tiny ops cost one launch each (launch-bound),
big ones cost their own time (bandwidth- or compute-bound).

Example:
    >>> import numpy as np
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder(); x = b.input((4,), f32); y = b.op("exp", x)
    >>> with make_device("edge-npu") as dev:
    ...     buf = dev.run(b.nodes[0], [dev.upload(np.zeros(4, np.float32), x.type)])
    ...     dev.download(buf, y.type).tolist()
    [1.0, 1.0, 1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.lower import lower
from chipsim.errors import ExecutionError, SimulationError
from chipsim.frontend.device import Device
from chipsim.hw.allocator import Block, CachingAllocator
from chipsim.hw.chip import Chip, get_chip
from chipsim.hw.isa import Instr, Operand
from chipsim.hw.simulator import Simulator
from chipsim.ir.dtypes import to_storage
from chipsim.ir.graph import Graph, Node
from chipsim.ir.ops import get_op
from chipsim.ir.types import TensorType
from chipsim.runtime.program import Program
from chipsim.runtime.report import KernelSpan, Report
from chipsim.target import Level

#: What compiles a jitted graph for a device: ``compiler(graph, chip=..., double_buffer=...)``
#: returns a :class:`Program` (``chipsim.compile``, handed in by ``chipsim.device``).
GraphCompiler = Callable[..., Program]


@dataclass(eq=False, slots=True)
class ChipBuffer:
    """A tensor's bytes in the chip's DRAM. Reshapes share the block (``refs`` counts them)."""

    block: Block
    offset: int
    refs: list[int]  # shared, mutable reference count of the block

    def operand(self, type: TensorType) -> Operand:
        return Operand(Level.DRAM, self.offset, type.shape, type.dtype.name)


class ChipDevice(Device):
    """An eager device backed by the simulator (see the module docstring).

    Args:
        chip: a preset name or a :class:`~chipsim.hw.chip.Chip`.
        functional: compute values (``False``: timing only; ``download`` then raises).
        double_buffer: let each kernel overlap DMA with compute.
        compiler: what compiles the graphs of ``@chipsim.jit`` functions run on this device
            (``chipsim.device`` hands in ``chipsim.compile``; the runtime itself only runs
            instructions). Without one, a device runs eager ops only.
    """

    def __init__(
        self,
        chip: str | Chip = "edge-npu",
        *,
        functional: bool = True,
        double_buffer: bool = True,
        compiler: GraphCompiler | None = None,
    ) -> None:
        self.chip = get_chip(chip)
        self.name = self.chip.name
        self.functional = functional
        self.double_buffer = double_buffer
        self.sim = Simulator(self.chip, functional=functional)
        self.allocator = CachingAllocator(self.chip.dram.capacity_bytes)
        self.spans: list[KernelSpan] = []
        self.compiler = compiler
        self.programs: dict[Graph, Program] = {}  # compiled programs of jitted graphs
        self._report: Report | None = None

    # -- the Device protocol ------------------------------------------------------------------
    def upload(self, array: np.ndarray, type: TensorType) -> ChipBuffer:
        """Copy host values into a fresh DRAM block (host-to-device copies are not timed)."""
        buf = self._alloc(type)
        self.sim.host_wrote(buf.operand(type))  # a reused block's old lines leave the L2
        if self.functional:
            values = to_storage(np.asarray(array), type.dtype)
            self.sim.memory[Level.DRAM].write(buf.operand(type), values, "upload")
        return buf

    def download(self, buffer: ChipBuffer, type: TensorType) -> np.ndarray:
        """Wait for the chip, then copy the tensor's values back to the host."""
        self.sim.run([Instr("sync", "host", label="download")])
        if not self.functional:
            raise SimulationError(
                "this device runs timing only (functional=False) and holds "
                "no values; create it with functional=True to read tensors"
            )
        return self.sim.memory[Level.DRAM].read(buffer.operand(type), "download")

    def run(self, node: Node, inputs: Sequence[ChipBuffer]) -> ChipBuffer:
        """Run ``node`` as one kernel: launch, load, compute, store."""
        opdef = get_op(node.op)
        if opdef.is_constant:
            return self.upload(node.attrs["value"].array(), node.type)
        if not opdef.moves_data:  # a view (reshape): same bytes, new shape, no kernel
            src = inputs[0]
            src.refs[0] += 1
            return ChipBuffer(src.block, src.offset, src.refs)
        out = self._alloc(node.type)
        location = {
            v: Location(Level.DRAM, b.offset) for v, b in zip(node.inputs, inputs, strict=False)
        }
        location[node.output] = Location(Level.DRAM, out.offset)
        spec = KernelSpec.of([node], [node.output], location)
        program = lower(spec, self.chip, double_buffer=self.double_buffer, launch="eager")
        first = len(self.sim.records)
        self.sim.run(program)
        self.spans.append(KernelSpan(spec.name, first, len(self.sim.records)))
        self._report = None
        return out

    def release(self, buffer: ChipBuffer, type: TensorType) -> None:
        """The tensor died: when no view shares its block, return the block to the cache."""
        buffer.refs[0] -= 1
        if buffer.refs[0] == 0:
            self.allocator.free(buffer.block)

    def run_graph(self, graph: Graph, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run a whole static graph (from ``@chipsim.jit``) as a compiled program on this chip.

        The program is compiled once per graph with the reference passes and runs on its own
        simulator: its cost is ``device.programs[graph].report``, not part of
        :attr:`report` (which covers the eager kernels).
        """
        if self.compiler is None:
            raise ExecutionError(
                f"this {self.name} device has no compiler for the jitted graph {graph.name!r}; "
                "make the device with chipsim.device(...), which hands it chipsim.compile "
                "(or pass compiler=chipsim.compile to ChipDevice)"
            )
        if graph not in self.programs:
            self.programs[graph] = self.compiler(
                graph, chip=self.chip, double_buffer=self.double_buffer
            )
        outs, _ = self.programs[graph].run(*arrays, functional=self.functional)
        return outs

    # -- results ------------------------------------------------------------------------------
    @property
    def report(self) -> Report:
        """The :class:`Report` of everything this device ran so far."""
        if self._report is None or len(self._report.records) != len(self.sim.records):
            peaks = {Level.DRAM: self.allocator.peak_reserved}
            self._report = Report.from_records(
                self.chip, self.sim.records, self.spans, peaks, self.allocator.history
            )
        return self._report

    @property
    def cycles(self) -> int:
        return self.sim.cycles

    def _alloc(self, type: TensorType) -> ChipBuffer:
        block = self.allocator.malloc(type.nbytes)
        return ChipBuffer(block, block.offset, [1])

    def __repr__(self) -> str:
        return f"<ChipDevice {self.name}: {len(self.spans)} kernels, {self.sim.cycles:,} cycles>"


def make_device(
    name_or_chip: str | Chip = "edge-npu",
    *,
    functional: bool = True,
    double_buffer: bool = True,
    compiler: GraphCompiler | None = None,
) -> ChipDevice:
    """An eager device on a simulated chip; use it as ``with make_device("edge-npu") as dev:``.

    ``chipsim.device`` is this with ``compiler=chipsim.compile``, so jitted functions run too.
    """
    return ChipDevice(
        name_or_chip, functional=functional, double_buffer=double_buffer, compiler=compiler
    )
