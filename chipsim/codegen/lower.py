"""Lowering: a :class:`KernelSpec` becomes a list of instructions for a chip, in two steps:
planning decides everything, then emission — a pure function of the kernel and its plan —
writes the instructions down.

The recipe, the same for a single eager op and for a fused group:

1. **Tile over rows.** Split the outputs along axis 0 into tiles small enough that each
   tile's working set (its input rows, intermediates and output rows, twice over when
   double buffering) fits SRAM, next to the tensors every tile needs whole (weights).
2. **Stream.** For tile t: DMA-load tile t+1's inputs, compute tile t (each node on its unit,
   intermediates stay in SRAM), DMA-store tile t's outputs. With two buffers per tensor the
   DMA engine fills one while the units compute on the other: DMA overlaps compute. With one
   buffer, each load must wait until the previous tile is done with it: no overlap.
3. **Spill** when even a one-row tile does not fit: every node then reads and writes DRAM
   directly (intermediates in a DRAM scratch area), paying DRAM bandwidth with no reuse.
   Slower, never a failure; this is what over-fusion costs.

How the tiles are chosen, or whether the kernel is blocked or spilled instead, is planned in
:mod:`chipsim.codegen.planning` (:func:`~chipsim.codegen.planning.plan_lowering`); this
module's :func:`emit` turns that frozen plan into instructions, deciding nothing itself, and
:func:`lower` does both: ``lower(k, chip)`` is ``emit(k, chip, plan_lowering(k, chip))``
(after a launch instruction when asked for one).

Example: a relu over 1 MiB of rows on a chip with 512 KiB of SRAM (the plan, 9 balanced tiles,
is :mod:`chipsim.codegen.planning`'s example); each tile's load overlaps the previous tile's
compute:

    >>> from chipsim.codegen.planning import plan_lowering
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.hw import get_chip
    >>> b = GraphBuilder()
    >>> x = b.input((4096, 64), f32); y = b.op("relu", x)
    >>> k = KernelSpec.of(b.nodes[-1:], [y], {x: Location("dram", 0), y: Location("dram", 2**20)})
    >>> [i.opcode for i in lower(k, get_chip("edge-npu"))][:6]
    ['load', 'load', 'vec', 'store', 'load', 'vec']
    >>> chip = get_chip("edge-npu")
    >>> [i.opcode for i in emit(k, chip, plan_lowering(k, chip))][:6]
    ['load', 'load', 'vec', 'store', 'load', 'vec']
"""

from __future__ import annotations

from chipsim.codegen.blocked import emit_blocked
from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.planning import LoweringPlan, plan_lowering
from chipsim.codegen.units import compute_instrs, immediate_instr
from chipsim.errors import PlanError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand
from chipsim.ir.graph import Value
from chipsim.ir.ops import check_attrs, get_op
from chipsim.target import Level


def emit(kernel: KernelSpec, chip: Chip, plan: LoweringPlan) -> list[Instr]:
    """The instructions that run ``kernel`` on ``chip`` as ``plan`` says.

    A pure function: it reads only its arguments and decides nothing (the plan has every
    choice), so the same plan always gives the same instructions.
    """
    if plan.kernel_plan.mode == "blocked":
        if plan.blocked is None:
            raise PlanError(f"kernel {kernel.name!r}: a blocked plan without its blocks")
        bk, blocks = plan.blocked
        return emit_blocked(kernel, chip, bk, blocks, dict(plan.names), plan.sram_lo)
    return _Emitter(kernel, chip, plan).emit()


class _Emitter:
    """Emission of one row-tiled or spilled kernel: a reader of its three arguments, kept
    together so that the helpers below need not pass them around (not part of the public
    API)."""

    def __init__(self, kernel: KernelSpec, chip: Chip, plan: LoweringPlan) -> None:
        self.k, self.chip, self.plan, self.homes = kernel, chip, plan, plan.homes

    def emit(self) -> list[Instr]:
        k, tiling, homes = self.k, self.plan.kernel_plan, self.homes
        prog: list[Instr] = []
        for n in self.plan.immediates:
            prog.append(immediate_instr(n, self._view(n.output, 0, False), self.chip, k.name))
        for v in self.plan.external:  # whole inputs: loaded once
            if (
                homes[v].level == Level.SRAM
                and homes[v].kind == "whole"
                and k.location[v].level == Level.DRAM
            ):
                prog.append(self._dma("load", self._dram(v, 0, False), self._view(v, 0, False)))
        stream_in = [v for v in self.plan.external if homes[v].kind == "stream"]
        stream_out = [v for v in k.outputs if homes[v].kind == "stream"]
        # with two buffers, load tile t+1 before computing tile t (prefetch); with one
        # buffer, tile t+1 must wait until tile t is done with it
        ahead = 1 if tiling.buffers > 1 else 0
        for t in range(-ahead, tiling.tiles):
            if t + ahead < tiling.tiles:
                for v in stream_in:
                    src, dst = self._dram(v, t + ahead, True), self._view(v, t + ahead, True)
                    prog.append(self._dma("load", src, dst))
            if t < 0:
                continue
            prog += self._compute_tile(t)
            for v in stream_out:
                prog.append(self._dma("store", self._view(v, t, True), self._dram(v, t, True)))
        for v in k.outputs:  # whole outputs: stored once
            if (
                homes[v].level == Level.SRAM
                and homes[v].kind == "whole"
                and k.location[v].level == Level.DRAM
            ):
                prog.append(self._dma("store", self._view(v, 0, False), self._dram(v, 0, False)))
        return prog

    def _tile_rows(self, t: int) -> tuple[int, int]:
        r = self.plan.kernel_plan.rows_per_tile
        return t * r, min(self.plan.kernel_plan.rows, (t + 1) * r) - t * r

    def _shape(self, v: Value, t: int, rowed: bool) -> tuple[tuple[int, ...], int]:
        """Shape of ``v`` in tile ``t`` and the byte offset of its first row (the whole of
        ``v`` unless it is ``rowed`` and the kernel runs in row tiles)."""
        tiling = self.plan.kernel_plan
        if not rowed or tiling.mode == "spill" or tiling.rows < 2:
            return v.shape, 0
        r0, nrows = self._tile_rows(t)
        return (nrows, *v.shape[1:]), r0 * (v.type.nbytes // tiling.rows)

    def _view(self, v: Value, t: int, rowed: bool) -> Operand:
        home = self.homes[v]
        shape, row_offset = self._shape(v, t, rowed)
        if home.kind == "stream":
            offset = home.offsets[t % len(home.offsets)]
        else:
            offset = home.offsets[0] + (row_offset if rowed else 0)
        return Operand(home.level, offset, shape, v.dtype.name, None, self.plan.names[v])

    def _dram(self, v: Value, t: int, rowed: bool) -> Operand:
        shape, row_offset = self._shape(v, t, rowed)
        loc: Location = self.k.location[v]
        return Operand(
            Level.DRAM, loc.offset + row_offset, shape, v.dtype.name, None, self.plan.names[v]
        )

    def _dma(self, opcode: str, src: Operand, dst: Operand) -> Instr:
        return dma(opcode, src, dst, self.k.name)

    def _compute_tile(self, t: int) -> list[Instr]:
        instrs: list[Instr] = []
        for node, rowed in self.plan.steps:
            srcs = tuple(self._view(v, t, r) for v, r in zip(node.inputs, rowed, strict=True))
            dst = self._view(node.output, t, True)
            out_type = node.type.with_shape(dst.shape)
            opdef = get_op(node.op)
            attrs = opdef.tile_attrs(check_attrs(opdef, node.attrs), out_type)
            label = node.op if self.plan.kernel_plan.tiles == 1 else f"{node.op} tile {t}"
            instrs += compute_instrs(
                node, srcs, dst, out_type, attrs, self.chip, self.k.name, label
            )
        return instrs


def lower(
    kernel: KernelSpec, chip: Chip, *, double_buffer: bool = True, launch: str | None = None
) -> list[Instr]:
    """The instructions that run ``kernel`` on ``chip``: its plan, emitted.

    Args:
        kernel: the group of nodes and where its inputs and outputs live.
        chip: the target chip.
        double_buffer: give streamed tensors two SRAM buffers so DMA overlaps compute.
        launch: prepend a kernel launch: ``"eager"`` (dispatch from Python) or ``"graph"``
            (next kernel of a compiled program); ``None`` for no launch instruction.
    """
    prog = emit(kernel, chip, plan_lowering(kernel, chip, double_buffer=double_buffer))
    if launch is not None:
        if launch not in ("eager", "graph"):
            raise PlanError(f"launch must be 'eager', 'graph' or None, got {launch!r}")
        opcode = "launch" if launch == "eager" else "launch_graph"
        if launch == "eager" and any(i.unit in ("tensor", "mac") for i in prog):
            opcode = "launch_library"  # an eager contraction is a call into the vendor's library
        prog.insert(0, Instr(opcode, "host", kernel=kernel.name, label=f"launch {kernel.name}"))
    return prog
