"""The parts a chip is made of: one small frozen dataclass per unit, memory or cost table.

:class:`ALU`, :class:`MACArray`, :class:`SIMD` and :class:`TensorCore` compute;
:class:`DMA` moves data between :class:`DRAM`, :class:`SRAM` and :class:`Registers`, through
an :class:`L2` cache in front of DRAM where the chip has one;
:class:`SMs` describes a GPU's streaming multiprocessors; :class:`Launch` says what starting a
kernel costs and :class:`Energy` what each action costs in picojoules. A
:class:`~chipsim.hw.chip.Chip` is one of each.

Example:
    >>> SIMD().lanes, TensorCore(dtypes=("i8",)).takes("f32")
    (8, False)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ALU:
    """Scalar arithmetic units: ``count`` of them, each ``cycles_per_op`` cycles per operation."""

    count: int = 1
    cycles_per_op: int = 1
    fixed_cycles: int = 1


@dataclass(frozen=True, slots=True)
class MACArray:
    """A multiply-accumulate array: ``macs_per_cycle`` MACs every cycle, any shape."""

    macs_per_cycle: int = 16
    fixed_cycles: int = 4


@dataclass(frozen=True, slots=True)
class SIMD:
    """A vector unit: ``lanes`` elements per instruction ("eight additions at once")."""

    lanes: int = 8
    count: int = 1  # vector units working side by side
    fixed_cycles: int = 2


@dataclass(frozen=True, slots=True)
class TensorCore:
    """A matrix unit: one operation multiplies an (m, k) tile by a (k, n) tile and accumulates.

    ``dtypes`` are the element types it multiplies at full rate; a float contraction of any
    other type runs on the MAC array (a GPU's CUDA cores). ``tf32_cycles_per_tile`` > 0 says
    the unit also has a TensorFloat-32 mode for f32 inputs at that many cycles per tile; it is
    used only when ``allow_tf32`` is set (an explicit opt-in, as in PyTorch), see
    :meth:`~chipsim.hw.chip.Chip.with_tf32`.
    """

    tile: tuple[int, int, int] = (4, 4, 4)  # (m, n, k)
    count: int = 1  # tile operations started per ``cycles_per_tile`` cycles
    cycles_per_tile: int = 1
    fixed_cycles: int = 4
    dtypes: tuple[str, ...] = ("f16", "bf16", "f32")
    tf32_cycles_per_tile: int = 0
    allow_tf32: bool = False
    sustained_pct: int = 100  # share of the peak rate a long run sustains (issue pipelines)

    def takes(self, dtype: str) -> bool:
        """Whether a contraction of ``dtype`` elements runs on this unit."""
        return dtype in self.dtypes or (
            dtype == "f32" and self.allow_tf32 and self.tf32_cycles_per_tile > 0
        )

    def tile_cycles(self, dtype: str) -> int:
        """Cycles per tile operation for ``dtype`` (TF32 mode for f32 if that is how it runs)."""
        if dtype == "f32" and "f32" not in self.dtypes and self.tf32_cycles_per_tile > 0:
            return self.tf32_cycles_per_tile
        return self.cycles_per_tile


@dataclass(frozen=True, slots=True)
class DMA:
    """DMA engines move data between memories without using a compute unit.

    The engines are modelled as one in-order queue with their aggregate bandwidth.
    """

    engines: int = 1
    bytes_per_cycle: int = 16
    setup_cycles: int = 32


@dataclass(frozen=True, slots=True)
class DRAM:
    """Off-chip memory: large, slow, far away."""

    capacity_bytes: int = 64 * 2**20
    bytes_per_cycle: int = 16  # peak (datasheet)
    latency_cycles: int = 100
    sustained_pct: int = 100  # share of the peak a streaming kernel reaches

    @property
    def sustained_bytes_per_cycle(self) -> int:
        """The bandwidth a long stream reaches: ``bytes_per_cycle * sustained_pct / 100``."""
        return max(1, self.bytes_per_cycle * self.sustained_pct // 100)


@dataclass(frozen=True, slots=True)
class SRAM:
    """On-chip scratchpad, small and fast (on a GPU: the SMs' shared memory, summed)."""

    capacity_bytes: int = 512 * 2**10
    bytes_per_cycle: int = 128


@dataclass(frozen=True, slots=True)
class L2:
    """A cache in front of DRAM (optional: ``capacity_bytes = 0``, the default, means none).

    Kernels then pass tensors to each other through DRAM, and the cache keeps the most
    recently used ``capacity_bytes`` of DRAM on chip, in lines of ``line_bytes``: a transfer
    that finds its lines there moves at ``bytes_per_cycle`` after ``latency_cycles`` (see
    :mod:`chipsim.hw.cache`). A store leaves its lines in the cache (for the next kernel to
    read) and reaches DRAM when they are evicted (write-back), or at once with
    ``write_through``. A chip without one (a scratchpad NPU) keeps activations in its
    SRAM instead, where the memory plan puts them.
    """

    capacity_bytes: int = 0
    bytes_per_cycle: int = 0
    latency_cycles: int = 0
    line_bytes: int = 128
    write_through: bool = False  # a store also reaches DRAM at once (else: when evicted)

    @property
    def present(self) -> bool:
        return self.capacity_bytes > 0


@dataclass(frozen=True, slots=True)
class SMs:
    """A GPU's streaming multiprocessors (optional: ``count = 0``, the default, means the chip
    is not built of SMs and none of this applies).

    A kernel runs as blocks, one SM each; ``shared_bytes`` is one SM's shared memory, the
    on-chip budget of one block. A reduction keeps a row on chip only while the row's f32
    working copy fits ``row_budget_bytes``; a longer row is streamed from DRAM again for each
    reduction pass (see :func:`chipsim.hw.isa.cost`, opcode ``refetch``). A contraction's
    output is cut into thread blocks of ``block_rows x block_cols`` elements, run ``count`` at
    a time in *waves* (:func:`chipsim.hw.isa.wave_share`; 0 leaves waves out).

    With ``operand_bytes_per_cycle`` > 0 a block's time is its own: each k-step it multiplies
    at one SM's share of the tensor rate *and* loads its operand panels (``bm + bn`` elements)
    at ``operand_bytes_per_cycle`` (one SM's load path from the L2), the slower deciding, plus
    ``block_fixed_cycles`` (filling the load pipeline, writing the tile back). The library
    then picks, shape by shape, the tile (the block size or half of it on either side) with
    the fewest cycles over all its waves: tensor-core efficiency follows the tile and wave
    shape instead of one constant.
    """

    count: int = 0
    shared_bytes: int = 0
    row_budget_bytes: int = 0
    block_rows: int = 0
    block_cols: int = 0
    operand_bytes_per_cycle: int = 0
    block_fixed_cycles: int = 0


@dataclass(frozen=True, slots=True)
class Registers:
    """The register file the units compute from."""

    capacity_bytes: int = 4 * 2**10


@dataclass(frozen=True, slots=True)
class Launch:
    """What starting a kernel costs, split as on a GPU driven from Python.

    * host dispatch, per kind of call (the host is busy; kernels queue ahead of the chip):
      ``eager_cycles`` for a framework's own kernel (PyTorch's ATen), ``library_cycles`` for
      a call into the vendor library (a contraction: cuBLAS), ``compiled_cycles`` for a call
      into a compiled function (``torch.compile``'s wrapper); ``graph_cycles`` for the next
      kernel inside a compiled program;
    * ``overlap_cycles``: how much of an eager call's dispatch comes *after* its kernel is
      launched (the call returning to Python), running beside the kernel; ``compiled_overlap``
      the same for a compiled call (its wrapper's bookkeeping after the launch);
    * ``device_cycles``: from an eager launch on the host to the kernel starting on the chip;
    * ``sync_cycles``: the host noticing the chip is done (``download``, ``synchronize``);
    * ``kernel_gap_cycles``: on the chip, the start-up of every eagerly launched kernel: after
      the work before it, even when it is already queued (the front end starting a new grid,
      the first loads of a stream ramping up). What a CUDA event around one tiny kernel sees.

    A field left at 0 means "as ``eager_cycles``" (library/compiled) or "free" (device, sync).
    """

    eager_cycles: int = 2000
    graph_cycles: int = 200
    library_cycles: int = 0
    compiled_cycles: int = 0
    overlap_cycles: int = 0
    compiled_overlap_cycles: int = 0
    device_cycles: int = 0
    sync_cycles: int = 0
    kernel_gap_cycles: int = 0

    @property
    def library(self) -> int:
        return self.library_cycles or self.eager_cycles

    @property
    def compiled(self) -> int:
        return self.compiled_cycles or self.eager_cycles


@dataclass(frozen=True, slots=True)
class Energy:
    """Energy per action in picojoules, and where the figures come from."""

    mac_pj: float = 1.5
    op_pj: float = 0.4
    dram_byte_pj: float = 160.0
    sram_byte_pj: float = 2.5
    reg_byte_pj: float = 0.1
    source: str = "Horowitz, 'Computing's energy problem', ISSCC 2014 (45 nm)"
