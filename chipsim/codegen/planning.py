"""Planning a kernel: how it will run on a chip, and where each of its values lives.

A :class:`KernelPlan` says which of three ways a kernel runs (see :mod:`chipsim.codegen.lower`
for the recipe the instructions follow):

* ``"tiled"``: the outputs are cut along axis 0 into row tiles whose working set fits SRAM,
  next to the tensors every tile needs whole; the number of rows per tile minimises a simple
  estimate of the kernel's time;
* ``"blocked"``: a single contraction (plus epilogue) whose weight leaves no room for row
  tiles is cut over rows, columns and the inner dimension (:mod:`chipsim.codegen.blocked`);
* ``"spill"``: not even a one-row tile fits, so every node reads and writes DRAM directly.

A :class:`Home` says where a value sits during the kernel. :func:`plan_kernel`,
:func:`plan_homes` and :func:`scratch_bytes` answer without emitting any instruction;
:func:`plan_lowering` gathers everything emission needs into one frozen
:class:`LoweringPlan`, which :func:`~chipsim.codegen.lower.emit` turns into instructions.

Example:
    >>> from chipsim.codegen.kernel import KernelSpec, Location
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.hw import get_chip
    >>> b = GraphBuilder()
    >>> x = b.input((4096, 64), f32); y = b.op("relu", x)
    >>> k = KernelSpec.of(b.nodes[-1:], [y], {x: Location("dram", 0), y: Location("dram", 2**20)})
    >>> plan = plan_kernel(k, get_chip("edge-npu"))
    >>> plan.mode, plan.tiles, plan.rows_per_tile, plan.buffers
    ('tiled', 9, 456, 2)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from chipsim.codegen.block_sizes import choose_blocks, count_loads, estimate_cycles
from chipsim.codegen.blocked import Blocks, sram_layout
from chipsim.codegen.contraction import BlockedKernel, match_blocked
from chipsim.codegen.kernel import KernelSpec
from chipsim.errors import PlanError
from chipsim.hw.chip import Chip
from chipsim.ir.graph import Node, Value
from chipsim.ir.ops import Pattern, flops, get_op
from chipsim.ir.ops.tiling import row_tiling
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN
from chipsim.target import Level

#: Blocks replace row tiles only when estimated this much faster (row tiles are the simpler
#: plan, and the estimate is rough; the case that matters is a weight that barely fits SRAM,
#: where thin row tiles are several times slower).
BLOCKS_MARGIN = 0.25


@dataclass(frozen=True, slots=True)
class Home:
    """Where a value sits during the kernel: per-tile buffers (``stream``) or one place."""

    kind: str  # "stream" (one buffer per in-flight tile) or "whole"
    level: str
    offsets: tuple[int, ...]
    rowed: bool  # may be sliced by rows


@dataclass(frozen=True, slots=True)
class KernelPlan:
    """How a kernel will run: tiled in SRAM or spilled to DRAM, and with what tiles."""

    mode: str  # "tiled", "blocked" (see chipsim.codegen.blocked) or "spill"
    rows: int  # rows of the outputs (axis 0), 1 if untileable
    rows_per_tile: int
    tiles: int  # output tiles
    buffers: int  # 2 when double buffering
    sram_bytes: int  # scratch SRAM used
    scratch_bytes: int  # DRAM scratch needed (spill mode)
    block: tuple[int, int, int] | None = None  # blocked mode: (rows, columns, inner) per tile


@dataclass(frozen=True, slots=True)
class LoweringPlan:
    """Everything emission needs, decided by planning: emission only follows it.

    Attributes:
        kernel_plan: the mode and the tiles.
        homes: where each value lives during the kernel (tiled and spill modes).
        names: the name of each value in the instructions.
        immediates: constants with no location, written into their home by an instruction.
        external: the values the kernel reads from where they are (inputs, located constants).
        steps: the nodes each tile computes (views, which move no data, left out), each with
            whether each of its inputs is sliced by rows (when the kernel runs in row tiles).
        blocked: blocked mode only: the contraction and its block sizes.
        sram_lo: the first SRAM byte the kernel may use.
    """

    kernel_plan: KernelPlan
    homes: Mapping[Value, Home]
    names: Mapping[Value, str]
    immediates: tuple[Node, ...]
    external: tuple[Value, ...]
    steps: tuple[tuple[Node, tuple[bool, ...]], ...]
    blocked: tuple[BlockedKernel, Blocks] | None
    sram_lo: int


class _Planner:
    """The state of planning one kernel (one object per call; not part of the public API)."""

    def __init__(self, kernel: KernelSpec, chip: Chip, double_buffer: bool) -> None:
        self.k, self.chip, self.double_buffer = kernel, chip, double_buffer
        self.produced = {n.output: n for n in kernel.nodes}
        self.compute = [n for n in kernel.nodes if not n.is_constant]
        self.immediates = [
            n for n in kernel.nodes if n.is_constant and n.output not in kernel.location
        ]
        self.external = list(kernel.inputs) + [
            n.output for n in kernel.nodes if n.is_constant and n.output in kernel.location
        ]
        self._check()
        self.spill = False
        self.rows, self.rowed, self.use_rowed = self._row_analysis()
        self.names = self._names()

    # -- analysis ----------------------------------------------------------------------------
    def _check(self) -> None:
        k = self.k
        if not k.nodes:
            raise PlanError(f"kernel {k.name!r} has no nodes")
        known = set(k.inputs) | set(self.produced)
        for node in k.nodes:
            for v in node.inputs:
                if v not in known:
                    raise PlanError(
                        f"kernel {k.name!r}: {node.op} reads {v!r}, which is neither "
                        f"a kernel input nor produced inside the group"
                    )
        for v in (*k.inputs, *k.outputs):
            if v not in k.location:
                raise PlanError(
                    f"kernel {k.name!r}: no location for {v!r}; give every input "
                    f"and output a Location"
                )
        for v in k.outputs:
            if v not in self.produced:
                raise PlanError(f"kernel {k.name!r}: output {v!r} is not produced by the group")

    def _row_analysis(self) -> tuple[int, dict[Value, bool], dict[tuple[int, int], bool]]:
        """Rows to tile over, for each value whether every use may be row-sliced, and for
        each use whether it is: the ops' row rules composed by
        :func:`~chipsim.ir.ops.tiling.row_tiling` (which the fusion cost model reads too)."""
        tiling = row_tiling(self.k.nodes, self.k.outputs)
        if tiling is None:
            return 1, {}, {}
        return tiling.rows, dict(tiling.rowed), dict(tiling.uses)

    def _names(self) -> dict[Value, str]:
        names: dict[Value, str] = {}
        for i, v in enumerate(self.k.inputs):
            names[v] = v.hint or f"in{i}"
        for i, n in enumerate(self.k.nodes):
            names.setdefault(n.output, n.output.hint or f"{n.op}{i}")
        for i, v in enumerate(self.k.outputs):
            names[v] = v.hint or f"out{i}"
        return names

    def _is_alias(self, node: Node) -> bool:
        """A view (reshape) moves no data: its result shares its input's bytes (when it may)."""
        if get_op(node.op).moves_data or not node.inputs:
            return False
        if self.spill:
            return node.output not in self.k.outputs
        return node.output not in self._fixed_outputs()

    def _fixed_outputs(self) -> set[Value]:
        return {v for v in self.k.outputs if self.k.location[v].level != Level.DRAM}

    # -- planning ----------------------------------------------------------------------------
    def plan(self, need_scratch: bool = True) -> tuple[KernelPlan, dict[Value, Home]]:
        tiled = self._plan_tiled()
        if tiled is not None and not self._blocks_beat(tiled[0]):
            return tiled
        blocked = self._plan_blocked()
        if blocked is not None:
            return blocked, {}
        self.spill = True
        return self._plan_spill(need_scratch)

    def lowering_plan(self) -> LoweringPlan:
        """:meth:`plan`, and everything else emission needs, frozen."""
        plan, homes = self.plan()
        steps = tuple(
            (n, tuple(self.use_rowed.get((i, j), False) for j in range(len(n.inputs))))
            for i, n in enumerate(self.compute)
            if not self._is_alias(n)
        )
        frozen_homes, names = MappingProxyType(homes), MappingProxyType(self.names)
        blocked = self.blocked if plan.mode == "blocked" else None
        immediates, external = tuple(self.immediates), tuple(self.external)
        lo = self._window()[0]
        return LoweringPlan(plan, frozen_homes, names, immediates, external, steps, blocked, lo)

    def _window(self) -> tuple[int, int]:
        return self.k.sram_window or (0, self.chip.sram.capacity_bytes)

    def _blocks_beat(self, tiled: KernelPlan) -> bool:
        """Would blocking this contraction be clearly faster than its row tiles?

        Row tiles keep the whole weight in SRAM; when it barely fits, the tiles left for the
        rows are so thin that fixed costs dominate (a cliff just below SRAM's capacity).
        Row tiles are blocks with all columns and the whole inner dimension, so one cost
        model (:func:`~chipsim.codegen.block_sizes.estimate_cycles`) compares the two.
        """
        bk = match_blocked(self.k)
        if bk is None or bk.geometry.row_axis != 0 or bk.geometry.batch_axes:
            return False
        if tiled.tiles < 2:
            return False
        blocks = choose_blocks(bk, self.k, self.chip, self._window(), self.double_buffer)
        if blocks is None:
            return False
        shape = bk.contraction.type.shape
        cols = shape[bk.geometry.col_axis] if bk.geometry.col_axis is not None else 1
        rows = Blocks(tiled.rows_per_tile, cols, bk.geometry.k, tiled.buffers)
        as_rows = estimate_cycles(bk, self.k, self.chip, rows)
        return estimate_cycles(bk, self.k, self.chip, blocks) < as_rows * (1 - BLOCKS_MARGIN)

    def _plan_blocked(self) -> KernelPlan | None:
        """A single contraction (plus epilogue) too big for row tiles: block it."""
        bk = match_blocked(self.k)
        if bk is None:
            return None
        blocks = choose_blocks(bk, self.k, self.chip, self._window(), self.double_buffer)
        if blocks is None:
            return None
        self.blocked: tuple[BlockedKernel, Blocks] = (bk, blocks)
        lo = self._window()[0]
        sram = sram_layout(bk, self.k, blocks, lo)[1] - lo
        out_axes = list(range(bk.contraction.type.rank))
        tiles = count_loads(bk, blocks, out_axes)
        rows = self.k.outputs[0].shape[0] if self.k.outputs[0].type.rank else 1
        block = (blocks.rows, blocks.cols, blocks.inner)
        return KernelPlan("blocked", rows, blocks.rows, tiles, blocks.buffers, sram, 0, block)

    def _stream_values(self) -> list[Value]:
        """Values given per-tile SRAM buffers: rowed DRAM inputs, intermediates, DRAM outputs."""
        k, fixed = self.k, self._fixed_outputs()
        out: list[Value] = []
        for v in self.external:
            if self.rowed.get(v) and k.location[v].level == Level.DRAM:
                out.append(v)
        for n in self.compute:
            if not self._is_alias(n) and n.output not in fixed and self.rowed.get(n.output):
                out.append(n.output)
        return out

    def _whole_values(self, stream: list[Value]) -> list[Value]:
        """Values given one SRAM buffer for the whole kernel."""
        fixed, streamed = self._fixed_outputs(), set(stream)
        vals = [
            v for v in self.external if v not in streamed and self.k.location[v].level == Level.DRAM
        ]
        vals += [n.output for n in self.immediates]
        vals += [
            n.output
            for n in self.compute
            if not self._is_alias(n) and n.output not in fixed and n.output not in streamed
        ]
        return vals

    def _plan_tiled(self) -> tuple[KernelPlan, dict[Value, Home]] | None:
        lo, hi = self._window()
        rows = self.rows
        stream = self._stream_values()
        whole = self._whole_values(stream)
        whole_bytes = sum(align_up(v.type.nbytes, ALIGN) for v in whole)
        row_bytes = sum(v.type.nbytes // rows for v in stream)
        free = hi - lo - whole_bytes - 2 * ALIGN * len(stream)
        if free < 0:
            return None
        per_tile = min(rows, free // (2 * row_bytes)) if row_bytes else rows
        if per_tile < 1:
            return None
        per_tile = self._best_rows_per_tile(stream, rows, per_tile)
        tiles = -(-rows // per_tile)
        nbuf = 2 if self.double_buffer and tiles > 1 else 1
        homes: dict[Value, Home] = {}
        cursor = lo
        for v in whole:
            homes[v] = Home("whole", Level.SRAM, (cursor,), False)
            cursor += align_up(v.type.nbytes, ALIGN)
        for v in stream:
            size = align_up(per_tile * (v.type.nbytes // rows), ALIGN)
            homes[v] = Home(
                "stream", Level.SRAM, tuple(cursor + b * size for b in range(nbuf)), True
            )
            cursor += nbuf * size
        self._place_fixed(homes)
        plan = KernelPlan("tiled", rows, per_tile, tiles, nbuf, cursor - lo, 0)
        return plan, homes

    def _best_rows_per_tile(self, stream: list[Value], rows: int, most: int) -> int:
        """Rows per tile that minimise a simple estimate of the kernel's time.

        More tiles let DMA overlap compute (with two buffers only one tile's worth of the
        shorter of the two stays exposed), but every tile pays the fixed start-up cost of each
        of its DMA transfers. So, for ``t`` tiles, with D the DRAM transfer time and C the
        compute time at peak: ``t * transfers * fixed + max(D, C) + min(D, C) / t``.
        A tiny output is therefore not cut into pieces whose transfers cost more to start
        than to move, while a big, balanced kernel gets many tiles.
        """
        chip = self.chip
        fixed = chip.dma.setup_cycles + chip.dram.latency_cycles
        loc = self.k.location
        transfers = sum(1 for v in stream if v in loc and loc[v].level == Level.DRAM)
        dram = sum(v.type.nbytes for v in stream if v in loc and loc[v].level == Level.DRAM)
        d = dram / chip.dram.bytes_per_cycle
        c = 0.0
        for n in self.compute:
            peak = (
                chip.tensor_flops_per_cycle
                if get_op(n.op).pattern == Pattern.CONTRACTION
                else chip.vector_flops_per_cycle
            )
            c += flops(n.op, [v.type for v in n.inputs], n.type, n.attrs) / peak
        best_time, best_rows = None, most
        tiles = -(-rows // most)  # the fewest tiles that fit
        while True:
            # balanced: t tiles of (nearly) equal rows, never the largest tile that fits
            # plus a tiny remainder (which would leave nothing to overlap the last DMA with)
            per = -(-rows // tiles)
            t = -(-rows // per)
            overlap = self.double_buffer and t > 1
            time = t * transfers * fixed + (max(d, c) + min(d, c) / t if overlap else d + c)
            if best_time is None or time < best_time - 1e-9:
                best_time, best_rows = time, per
            if per == 1:
                break
            tiles *= 2
        return best_rows

    def _place_fixed(self, homes: dict[Value, Home]) -> None:
        """Values with a location outside DRAM are used in place; reshapes alias their input."""
        loc = self.k.location
        for v in self.external:
            if loc[v].level != Level.DRAM:
                homes[v] = Home("whole", loc[v].level, (loc[v].offset,), True)
        for v in self._fixed_outputs():
            homes[v] = Home("whole", loc[v].level, (loc[v].offset,), True)
        for n in self.compute:
            if self._is_alias(n):
                src = homes[n.inputs[0]]
                homes[n.output] = Home(src.kind, src.level, src.offsets, src.rowed)

    def _plan_spill(self, need_scratch: bool) -> tuple[KernelPlan, dict[Value, Home]]:
        loc = self.k.location
        homes: dict[Value, Home] = {}
        for v in self.external:
            homes[v] = Home("whole", loc[v].level, (loc[v].offset,), False)
        for v in self.k.outputs:
            homes[v] = Home("whole", loc[v].level, (loc[v].offset,), False)
        base = self.k.scratch.offset if self.k.scratch else 0
        cursor = 0
        for n in (*self.immediates, *self.compute):
            if n.output in homes:
                continue
            if self._is_alias(n):
                homes[n.output] = homes[n.inputs[0]]
                continue
            homes[n.output] = Home("whole", Level.DRAM, (base + cursor,), False)
            cursor += align_up(n.output.type.nbytes, ALIGN)
        if cursor and self.k.scratch is None and need_scratch:
            raise PlanError(
                f"kernel {self.k.name!r}: its working set does not fit SRAM even one row at a "
                f"time, so its intermediates spill to DRAM and need {cursor} bytes of scratch; "
                f"pass KernelSpec(scratch=Location('dram', offset)) or split the group"
            )
        return KernelPlan("spill", 1, 1, 1, 1, 0, cursor), homes


def plan_kernel(kernel: KernelSpec, chip: Chip, *, double_buffer: bool = True) -> KernelPlan:
    """How ``kernel`` will be tiled on ``chip`` (mode, tiles, SRAM and DRAM scratch bytes)."""
    return _Planner(kernel, chip, double_buffer).plan(need_scratch=False)[0]


def plan_homes(
    kernel: KernelSpec, chip: Chip, *, double_buffer: bool = True
) -> tuple[KernelPlan, dict[Value, Home], BlockedKernel | None]:
    """The plan of ``kernel``, where each value lives during it, and its blocked form (if
    blocked)."""
    planner = _Planner(kernel, chip, double_buffer)
    plan, homes = planner.plan(need_scratch=False)
    blocked = planner.blocked[0] if plan.mode == "blocked" else None
    return plan, homes, blocked


def plan_lowering(kernel: KernelSpec, chip: Chip, *, double_buffer: bool = True) -> LoweringPlan:
    """Everything :func:`~chipsim.codegen.lower.emit` needs to lower ``kernel`` on ``chip``
    (a :class:`PlanError` if it spills to DRAM and has no ``scratch`` area for it)."""
    return _Planner(kernel, chip, double_buffer).lowering_plan()


def scratch_bytes(kernel: KernelSpec, chip: Chip) -> int:
    """DRAM bytes ``kernel`` needs for spilled intermediates (0 when it fits SRAM)."""
    return plan_kernel(kernel, chip).scratch_bytes
