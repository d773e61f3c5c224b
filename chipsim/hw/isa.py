"""The instruction set of the simulated chip and what each instruction costs.

The style is a decoupled access/execute accelerator: DMA instructions move tensors between
DRAM and SRAM, compute instructions read and write SRAM on one execution unit, and host
instructions launch kernels or wait for the chip. One instruction may stand for many
hardware operations (a *macro-instruction*): an ``mma`` over an (m, k) x (k, n) tile is
``ceil(m/4) * ceil(n/4) * ceil(k/4)`` operations of a 4x4x4 tensor core, and
:attr:`Instr.hw_ops` reports that count.

Every instruction costs ``fixed + ceil(work / throughput)`` cycles, with the constants
taken from the :class:`~chipsim.hw.chip.Chip` (see :func:`cost`).

Example:
    >>> from chipsim.hw import get_chip, Operand, Instr, cost
    >>> chip = get_chip("edge-npu")
    >>> x = Operand("sram", 0, (64,), "f32")
    >>> add = Instr("vec", "simd", (x, x), (x,), work=64, hw_ops=8, flops=64)
    >>> cost(add, chip)   # 2 fixed + 64 elements / 8 lanes
    10
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from chipsim.errors import SimulationError
from chipsim.hw.chip import Chip
from chipsim.target import Level

#: Execution units, in the order timelines draw them.
UNITS: tuple[str, ...] = ("host", "alu", "mac", "simd", "tensor", "dma")
UNIT_TITLES = {
    "host": "Launch",
    "alu": "ALU",
    "mac": "MAC array",
    "simd": "SIMD",
    "tensor": "Tensor Core",
    "dma": "DMA",
}

#: Opcode -> unit that runs it.
OPCODES: dict[str, str] = {
    "load": "dma",
    "store": "dma",
    "copy": "dma",
    "refetch": "dma",
    "mma": "tensor",
    "mac": "mac",
    "vec": "simd",
    "scalar": "alu",
    "launch": "host",
    "launch_library": "host",
    "launch_graph": "host",
    "sync": "host",
}

#: Storage formats of the memories: name -> (numpy storage name, bytes per element).
#: ``bf16`` is stored as the top 16 bits of a float32, as real hardware does.
STORAGE: dict[str, tuple[str, int]] = {
    "f32": ("float32", 4),
    "f16": ("float16", 2),
    "bf16": ("uint16", 2),
    "i8": ("int8", 1),
    "i32": ("int32", 4),
    "i64": ("int64", 8),
    "bool": ("bool", 1),
    "u8": ("uint8", 1),
}


class Traffic(NamedTuple):
    """Where a transfer's DRAM bytes went, in bytes, as the L2 cache (:mod:`chipsim.hw.cache`)
    tells :func:`cost`: ``hit`` moved between the cache and the chip (a load's hits, all of a
    store), ``miss`` read from DRAM (a load's misses), ``written_back`` dirty lines it
    evicted, written to DRAM."""

    hit: int
    miss: int
    written_back: int

    def __add__(self, other: object) -> Traffic:  # type: ignore[override]
        if not isinstance(other, Traffic):
            return NotImplemented
        return Traffic(*(a + b for a, b in zip(self, other, strict=True)))

    @property
    def dram_bytes(self) -> int:
        """Bytes DRAM itself moved (misses read, dirty lines written back)."""
        return self.miss + self.written_back


@dataclass(frozen=True, slots=True)
class Operand:
    """A tensor in one memory: bytes at ``offset`` viewed as ``shape`` elements of ``dtype``.

    ``strides`` (in elements) describe a strided view, e.g. a column block of a matrix;
    ``None`` means dense row-major.
    """

    level: Level
    offset: int
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None = None
    name: str = ""
    # Computed once here: the simulator, the cost formulas and the report ask for them
    # several times per instruction (most of a timing-only run's time was spent on them).
    nbytes: int = field(init=False, repr=False, compare=False)
    _end: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        numel = math.prod(self.shape)
        itemsize = STORAGE[self.dtype][1]
        if numel == 0:
            end = self.offset
        elif self.strides is None:
            end = self.offset + numel * itemsize
        else:
            last = sum((d - 1) * s for d, s in zip(self.shape, self.strides, strict=False))
            end = self.offset + (last + 1) * itemsize
        object.__setattr__(self, "nbytes", numel * itemsize)  # elements x element size
        object.__setattr__(self, "_end", end)

    @property
    def itemsize(self) -> int:
        return STORAGE[self.dtype][1]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def byte_range(self) -> tuple[int, int]:
        """The lowest byte and one past the highest byte this operand touches."""
        return self.offset, self._end

    def with_shape(self, shape: tuple[int, ...]) -> Operand:
        return Operand(self.level, self.offset, tuple(shape), self.dtype, None, self.name)

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.shape)
        tag = f"{self.name}@" if self.name else ""
        return f"{tag}{self.level}[{self.offset}]:{self.dtype}[{dims}]"


@dataclass(frozen=True, slots=True, eq=False)
class Instr:
    """One instruction.

    Attributes:
        opcode: what it does (``load``, ``store``, ``copy``, ``mma``, ``mac``, ``vec``,
            ``scalar``, ``launch``, ``launch_graph``, ``sync``).
        unit: the unit that runs it (see :data:`OPCODES`).
        srcs, dsts: the tensors it reads and writes.
        work: units of work for the cost formula: bytes (dma), tile operations (tensor),
            MACs (mac), element-slots (simd), scalar operations (alu).
        hw_ops: how many hardware operations this macro-instruction stands for.
        flops: useful floating-point operations (for rooflines and energy).
        fn: the functional semantics, ``fn(*src_arrays) -> array or tuple of arrays``;
            ``None`` for pure data movement (DMA copies src to dst) or timing-only work.
        kernel: name of the kernel the instruction belongs to.
        label: a short human description (e.g. ``"matmul rows 0:16"``).
    """

    opcode: str
    unit: str
    srcs: tuple[Operand, ...] = ()
    dsts: tuple[Operand, ...] = ()
    work: int = 0
    hw_ops: int = 0
    flops: int = 0
    fn: Callable[..., Any] | None = None
    kernel: str = ""
    label: str = ""

    def __str__(self) -> str:
        ins = ", ".join(str(s) for s in self.srcs)
        outs = ", ".join(str(d) for d in self.dsts)
        text = f"{self.opcode}.{self.unit} {outs} <- {ins}"
        return f"{text}  # {self.label}" if self.label else text


def mma_ops(chip: Chip, m: int, n: int, k: int, batch: int = 1) -> int:
    """Tensor-core operations for ``batch`` (m, k) x (k, n) products."""
    tm, tn, tk = chip.tensor_core.tile
    return batch * -(-m // tm) * -(-n // tn) * -(-k // tk)


def wave_share(
    chip: Chip, m: int, n: int, batch: int = 1, k: int = 0, itemsize: int = 2, unit: str = "tensor"
) -> tuple[int, int]:
    """``(occupied, useful)``: a contraction's output elements as its SMs' time counts them.

    On a chip of SMs with a thread-block tile (``chip.sm``), the ``batch`` (m, n) outputs are
    cut into blocks of ``block_rows x block_cols``, and the SMs run them ``count`` blocks at a
    time, in waves. The last wave lasts as long as a full one, however few blocks it has, so
    the units are occupied for ``waves * count`` blocks while only ``batch * m * n`` outputs
    are useful: the code generator scales a contraction's work by ``occupied / useful``.
    A product of fewer blocks than SMs is not charged so: a library cuts it into smaller
    blocks or splits its sum over k (split-K) until one wave fills the SMs. Elsewhere
    ``(1, 1)``: no waves.

    With ``sm.operand_bytes_per_cycle`` set, each block's own time decides instead (see
    :class:`~chipsim.hw.parts.SMs`; ``k`` is the contraction's depth, ``itemsize`` its
    operands' element size): ``occupied / useful`` is the kernel's time over its time at the
    whole chip's rate (``unit``: ``tensor``, or ``mac`` for the CUDA cores), for the best of
    the candidate tiles.

    Example:
        >>> from chipsim.hw import get_chip
        >>> gpu = get_chip("datacenter-gpu")  # 108 SMs, 128 x 128 blocks
        >>> import dataclasses
        >>> sm = dataclasses.replace(gpu.sm, operand_bytes_per_cycle=0)  # the plain wave model
        >>> gpu = dataclasses.replace(gpu, sm=sm)
        >>> wave_share(gpu, 128 * 108, 128)  # 108 blocks: one wave, every SM busy
        (1, 1)
        >>> wave_share(gpu, 128 * 109, 128)  # one block more: a second wave, 1 SM busy
        (3538944, 1785856)
    """
    sm = chip.sm
    if not (sm.count and sm.block_rows and sm.block_cols):
        return 1, 1
    if sm.operand_bytes_per_cycle and k:
        return _block_time_share(chip, m, n, batch, k, itemsize, unit)
    blocks = batch * -(-m // sm.block_rows) * -(-n // sm.block_cols)
    if blocks <= sm.count:
        return 1, 1
    waves = -(-blocks // sm.count)
    return waves * sm.count * min(m, sm.block_rows) * min(n, sm.block_cols), batch * m * n


def _block_time_share(
    chip: Chip, m: int, n: int, batch: int, k: int, itemsize: int, unit: str
) -> tuple[int, int]:
    """Waves x one block's cycles, for the best tile, over the whole chip's time (per 1/1000
    of an output-element-k-step at one SM's rate, to keep integers exact)."""
    sm = chip.sm
    tc = chip.tensor_core
    tm, tn, tk = tc.tile
    if unit == "mac":
        macs_per_sm = chip.mac.macs_per_cycle / sm.count  # MAC/cycle, one SM
    else:
        macs_per_sm = tm * tn * tk * tc.count / tc.cycles_per_tile / sm.count
    best = None
    for bm in (sm.block_rows, max(sm.block_rows // 2, 1)):
        for bn in (sm.block_cols, max(sm.block_cols // 2, 1)):
            rm, rn = min(m, bm), min(n, bn)  # a block never larger than the product
            blocks = batch * -(-m // bm) * -(-n // bn)
            waves = -(-blocks // sm.count)
            per_k = max(rm * rn / macs_per_sm, (rm + rn) * itemsize / sm.operand_bytes_per_cycle)
            cycles = waves * (sm.block_fixed_cycles + k * per_k)
            best = cycles if best is None else min(best, cycles)
    assert best is not None
    ideal = batch * m * n * k / (macs_per_sm * sm.count)  # every SM busy at its tensor rate
    return max(1, round(best * 1000)), max(1, round(ideal * 1000))


def simd_ops(chip: Chip, elements: int, slots: int = 1) -> int:
    """Vector instructions for ``elements`` elements, ``slots`` slots each."""
    return -(-elements // chip.simd.lanes) * slots


def _dma_cycles(instr: Instr, chip: Chip, traffic: Traffic | None) -> int:
    levels = {o.level for o in (*instr.srcs, *instr.dsts)}
    if instr.opcode == "refetch":  # a timing-only re-read from DRAM (its data is on chip)
        levels = {Level.DRAM}
    bpc = chip.dma.bytes_per_cycle
    fixed = chip.dma.setup_cycles
    if Level.SRAM in levels:
        bpc = min(bpc, chip.sram.bytes_per_cycle)
    if Level.DRAM in levels and traffic is not None:  # through the L2: every byte crosses the
        fixed += chip.dram.latency_cycles if traffic.miss else chip.l2.latency_cycles  # L2,
        bpc = min(bpc, chip.l2.bytes_per_cycle)  # DRAM's share meanwhile, pipelined
        dram = -(-traffic.dram_bytes // chip.dram.sustained_bytes_per_cycle)
        return fixed + max(-(-instr.work // bpc), dram)
    if Level.DRAM in levels:
        bpc = min(bpc, chip.dram.sustained_bytes_per_cycle)
        fixed += chip.dram.latency_cycles
    return fixed + -(-instr.work // bpc)


def cost(instr: Instr, chip: Chip, traffic: Traffic | None = None) -> int:
    """Cycles ``instr`` occupies its unit on ``chip``: ``fixed + ceil(work / throughput)``.

    A compute instruction is also never faster than its SRAM traffic allows; one whose
    operands sit in DRAM (a *spill*) stalls on them: it pays their DRAM transfer time on top,
    with no overlap, as a unit waiting on cache misses does.

    On a chip with an L2 cache the simulator says what a DMA transfer's DRAM bytes found
    there (``traffic``, see :mod:`chipsim.hw.cache`): every byte crosses the L2 at its
    bandwidth while DRAM moves the misses and write-backs at its own, the two pipelined (the
    slower decides), and only a transfer that misses waits DRAM's latency.
    """
    unit = instr.unit
    if unit == "dma":
        return _dma_cycles(instr, chip, traffic)
    if unit == "host":
        if instr.opcode == "launch":
            return chip.launch.eager_cycles
        if instr.opcode == "launch_library":
            return chip.launch.library
        if instr.opcode == "launch_graph":
            return chip.launch.graph_cycles
        return chip.launch.sync_cycles
    if unit == "tensor":
        tc = chip.tensor_core
        dtype = instr.srcs[0].dtype if instr.srcs else "f16"
        rate = tc.count * tc.sustained_pct  # tile operations per 100 cycles
        fixed, busy = tc.fixed_cycles, -(-instr.work * 100 // rate) * tc.tile_cycles(dtype)
    elif unit == "simd":
        fixed, busy = chip.simd.fixed_cycles, -(-instr.work // (chip.simd.lanes * chip.simd.count))
    elif unit == "mac":
        fixed, busy = chip.mac.fixed_cycles, -(-instr.work // chip.mac.macs_per_cycle)
    elif unit == "alu":
        fixed, busy = (
            chip.alu.fixed_cycles,
            -(-instr.work * chip.alu.cycles_per_op // chip.alu.count),
        )
    else:
        raise SimulationError(f"instruction {instr}: unknown unit {unit!r}; use one of {UNITS}")
    sram = dram = 0
    for o in (*instr.srcs, *instr.dsts):
        if o.level == Level.SRAM:
            sram += o.nbytes
        elif o.level == Level.DRAM:
            dram += o.nbytes
    busy = max(busy, -(-sram // chip.sram.bytes_per_cycle))
    if dram:
        fixed += chip.dram.latency_cycles
        busy += -(-dram // chip.dram.sustained_bytes_per_cycle)
    return fixed + busy
