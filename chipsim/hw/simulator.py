"""The list-scheduling simulator: functional and timing execution of instructions.

Each instruction starts at the latest of

* the moment its unit is free (units run in parallel, in program order within a unit),
* the end of every earlier instruction it depends on: read-after-write, write-after-read
  and write-after-write on overlapping bytes of the same memory,
* the kernel floor: a kernel starts only once it is launched **and** every instruction of
  the kernels before it has finished. Kernels run one after another, as on one GPU stream;
  only the launches (on the host) queue ahead of the chip.

Instructions are taken in program order, so ties break by instruction id and the result is
the same on every run. Dependencies are found with one :class:`AccessMap` per memory, so a
program of n instructions costs O(n) map updates, not O(n^2) pairs.
DMA overlaps compute exactly when the program lets it (double buffering).

Example:
    >>> import numpy as np
    >>> from chipsim.hw import get_chip, Simulator, Operand, Instr
    >>> sim = Simulator(get_chip("edge-npu"))
    >>> a = Operand("dram", 0, (8,), "f32")
    >>> s = Operand("sram", 0, (8,), "f32")
    >>> sim.memory["dram"].write(a, np.arange(8))
    >>> recs = sim.run([Instr("load", "dma", (a,), (s,), work=32),
    ...                 Instr("vec", "simd", (s,), (s,), work=8, fn=lambda x: x * 2)])
    >>> float(sim.memory["sram"].read(s)[-1]), recs[1].start == recs[0].end
    (14.0, True)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from chipsim.errors import ChipsimError, SimulationError
from chipsim.hw.cache import L2Cache, Traffic
from chipsim.hw.chip import Chip
from chipsim.hw.isa import OPCODES, UNITS, Instr, Operand, cost
from chipsim.hw.memory import Memory
from chipsim.target import LEVELS, Level


class AccessMap:
    """For every byte address of one memory: the cycle its last write ends, and the latest
    cycle a read of it since that write ends (both 0 at first). Two step functions over the
    addresses that share their steps, so an access updates one map, not two. Ranges are
    ``[lo, hi)`` with ``0 <= lo`` (the simulator checks bounds before it asks).

    Example:
        >>> m = AccessMap()
        >>> m.write(0, 64, 10); m.read(32, 96, 15)
        >>> m.last_write(0, 128), m.last_access(40, 50), m.last_access(0, 8), m.last_access(96, 99)
        (10, 15, 10, 0)
    """

    __slots__ = ("_starts", "_written", "_read")

    def __init__(self) -> None:
        self._starts = [0]
        self._written = [0]
        self._read = [0]

    def _split(self, x: int) -> int:
        starts = self._starts
        i = bisect_right(starts, x) - 1
        if starts[i] == x:
            return i
        starts.insert(i + 1, x)
        self._written.insert(i + 1, self._written[i])
        self._read.insert(i + 1, self._read[i])
        return i + 1

    def _span(self, lo: int, hi: int) -> tuple[int, int]:
        """Indices of the steps that cover [lo, hi) (lo < hi)."""
        starts = self._starts
        i = bisect_right(starts, lo) - 1
        return i, bisect_left(starts, hi, i + 1)

    def last_write(self, lo: int, hi: int) -> int:
        """When the last write of any byte in [lo, hi) ends (a read must wait for it)."""
        if lo >= hi:
            return 0
        i, j = self._span(lo, hi)
        return self._written[i] if j == i + 1 else max(self._written[i:j])

    def last_access(self, lo: int, hi: int) -> int:
        """When the last write or read of any byte in [lo, hi) ends (a write waits for it)."""
        if lo >= hi:
            return 0
        i, j = self._span(lo, hi)
        if j == i + 1:
            return max(self._written[i], self._read[i])
        return max(max(self._written[i:j]), max(self._read[i:j]))

    def write(self, lo: int, hi: int, end: int) -> None:
        """[lo, hi) is written by an instruction ending at ``end``: no read of it since."""
        if lo >= hi:
            return
        i, j = self._split(lo), self._split(hi)
        self._starts[i:j] = [lo]
        self._written[i:j] = [end]
        self._read[i:j] = [0]

    def read(self, lo: int, hi: int, end: int) -> None:
        """[lo, hi) is read by an instruction ending at ``end``."""
        if lo >= hi:
            return
        i, j = self._split(lo), self._split(hi)
        reads = self._read
        for k in range(i, j):
            if reads[k] < end:
                reads[k] = end


@dataclass(frozen=True, slots=True)
class Record:
    """When one instruction ran: ``[start, end)`` in cycles."""

    index: int
    instr: Instr
    start: int
    end: int
    traffic: Traffic | None = None  # on a chip with an L2: where its DRAM bytes went

    @property
    def dram_bytes(self) -> int:
        """Bytes DRAM itself moved for this instruction (L2 hits are not DRAM traffic)."""
        if self.traffic is not None:
            return self.traffic.dram_bytes
        return sum(o.nbytes for o in (*self.instr.srcs, *self.instr.dsts) if o.level == Level.DRAM)

    @property
    def cycles(self) -> int:
        return self.end - self.start


class Simulator:
    """A chip's memories and units; :meth:`run` executes instructions and returns their times.

    The state persists between calls, so an eager device can run kernel after kernel.

    Args:
        chip: the chip to simulate.
        functional: compute values (default). ``False`` skips all numpy work and gives
            identical cycles (timing-only mode, for large models).
    """

    def __init__(self, chip: Chip, functional: bool = True) -> None:
        self.chip = chip
        self.functional = functional
        self.memory = {
            Level.DRAM: Memory(Level.DRAM, chip.dram.capacity_bytes),
            Level.SRAM: Memory(Level.SRAM, chip.sram.capacity_bytes),
            Level.REG: Memory(Level.REG, chip.registers.capacity_bytes),
        }
        self.records: list[Record] = []
        self._unit_free = dict.fromkeys(UNITS, 0)
        self._access = {lv: AccessMap() for lv in LEVELS}
        self._floor = 0  # the next kernel starts after its launch and all earlier work
        self._end = 0
        self._capacity = {level: m.capacity for level, m in self.memory.items()}
        self.l2 = L2Cache(chip.l2) if chip.l2.present else None

    @property
    def cycles(self) -> int:
        """Cycle at which the last instruction so far finishes."""
        return self._end

    def run(self, program: Iterable[Instr]) -> list[Record]:
        """Execute ``program`` after everything run before; return its records."""
        first = len(self.records)
        for instr in program:
            self._step(instr)
        return self.records[first:]

    def _where(self, instr: Instr) -> str:
        kernel = f" of kernel {instr.kernel!r}" if instr.kernel else ""
        return f"instruction #{len(self.records)} ({instr}){kernel}"

    def _bounds(self, op, instr: Instr) -> tuple[int, int]:
        """The byte range ``op`` touches, checked against its memory (the one bounds check)."""
        lo, hi = op.byte_range()
        if lo < 0 or hi > self._capacity.get(op.level, -1):
            if op.level not in self.memory:
                raise SimulationError(
                    f"{self._where(instr)}: tensor {op} is in unknown memory level "
                    f"{op.level!r}; use one of {', '.join(LEVELS)}"
                )
            self.memory[op.level].check(op, self._where(instr))  # raises, naming both
        return lo, hi

    def warm(self, operands: Iterable[Operand]) -> None:
        """Put these DRAM tensors in the L2 as a kernel just before would have left them
        (written, dirty); nothing happens on a chip without an L2. For measuring one kernel
        alone as it runs inside a program."""
        if self.l2 is not None:
            for op in operands:
                if op.level == Level.DRAM:
                    self.l2.access(op, write=True)

    def host_wrote(self, op: Operand) -> None:
        """The host copied new values into these DRAM bytes (untimed): an L2 forgets them."""
        if self.l2 is not None and op.level == Level.DRAM:
            self.l2.forget(op)

    def _traffic(self, instr: Instr) -> Traffic | None:
        """What a DMA transfer's DRAM bytes find in the L2 (None: no L2, or no DRAM bytes)."""
        if self.l2 is None or instr.unit != "dma" or instr.opcode == "refetch":
            return None
        total = None
        for ops, write in ((instr.srcs, False), (instr.dsts, True)):
            for op in ops:
                if op.level == Level.DRAM:
                    t = self.l2.access(op, write=write)
                    total = t if total is None else total + t
        return total

    def _step(self, instr: Instr) -> None:
        unit = instr.unit
        if OPCODES.get(instr.opcode) != unit:
            raise SimulationError(
                f"{self._where(instr)}: opcode {instr.opcode!r} does not run on unit {unit!r}"
            )
        access, bounds = self._access, self._bounds
        start = self._unit_free[unit]
        if unit != "host" and self._floor > start:
            start = self._floor
        srcs, dsts = instr.srcs, instr.dsts
        for op in srcs:
            lo, hi = bounds(op, instr)  # first: an unknown level is named, not a KeyError
            t = access[op.level].last_write(lo, hi)
            if t > start:
                start = t
        for op in dsts:
            lo, hi = bounds(op, instr)
            t = access[op.level].last_access(lo, hi)
            if t > start:
                start = t
        if instr.opcode == "sync":
            start = max(start, self._end)
        traffic = self._traffic(instr)
        end = start + cost(instr, self.chip, traffic)
        if unit == "host":  # a launch or sync: the next kernel waits for it and for all before
            arrive, done = end, self._end
            if instr.opcode in ("launch", "launch_library"):  # an eager launch reaches the chip
                launch = self.chip.launch  # after the device's latency; the host's return
                arrive += launch.device_cycles - min(launch.overlap_cycles, end - start)
                done += launch.kernel_gap_cycles  # and its own start-up on the chip
            self._floor = max(self._floor, arrive, done)
        if self.functional:
            self._execute(instr)
        for op in srcs:
            lo, hi = op.byte_range()
            access[op.level].read(lo, hi, end)
        for op in dsts:
            lo, hi = op.byte_range()
            access[op.level].write(lo, hi, end)
        self._unit_free[unit] = end
        self._end = max(self._end, end)
        self.records.append(Record(len(self.records), instr, start, end, traffic))

    def _execute(self, instr: Instr) -> None:
        memory = self.memory
        where = f"instruction #{len(self.records)}"  # bounds were checked, with context, above
        if instr.fn is None:
            if instr.unit == "dma":
                for src, dst in zip(instr.srcs, instr.dsts, strict=False):
                    memory[dst.level].write(dst, memory[src.level].read(src, where), where)
            return
        args = [memory[s.level].read(s, where) for s in instr.srcs]
        try:
            result = instr.fn(*args)
        except ChipsimError:
            raise
        except Exception as exc:  # a bug in generated code: say where it happened
            raise SimulationError(f"{self._where(instr)}: computing failed: {exc}") from exc
        results = result if isinstance(result, tuple) else (result,)
        if len(results) != len(instr.dsts):
            raise SimulationError(
                f"{where}: produced {len(results)} results for {len(instr.dsts)} destinations"
            )
        for dst, value in zip(instr.dsts, results, strict=False):
            memory[dst.level].write(dst, value, where)
