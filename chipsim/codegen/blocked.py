"""Blocked contractions: a matmul or conv whose weight does not fit SRAM, tiled three ways.

Row tiling (:mod:`chipsim.codegen.lower`) keeps a contraction's weight whole in SRAM and
streams blocks of rows past it. A GPT-2 weight (768 x 3072 f32 = 9 MiB) does not fit a
512 KiB scratchpad, so the output ``C = A @ B`` is cut into tiles over its rows (M) *and*
columns (N), and when even that is too big, the inner dimension (K) is cut as well::

    for each output tile C[i, j]:                  (a batched matmul: one batch index at a time)
        for each inner block k:
            load A[i, k] and B[k, j]               strided DMA straight from the full tensors
            C[i, j] += A[i, k] @ B[k, j]           tensor core; the sum stays in SRAM
        epilogue on C[i, j]                        bias, relu, gelu... while the tile is on chip
        store C[i, j]

**Double buffering.** Each step's loads are issued one step ahead into the other of two
buffers, so the DMA engine fetches step s+1 while the tensor core computes step s: a big
matmul takes about max(DMA time, compute time), not their sum.

**Reuse.** A tile is loaded only when it differs from the one loaded for the previous step.
With the whole inner dimension in one block, a row block of A is loaded once and used for
every column block.

**Tile sizes** are chosen in one place, :func:`~chipsim.codegen.block_sizes.choose_blocks`
(in :mod:`chipsim.codegen.block_sizes`, with its cost model); this module holds the loop
nest, the SRAM layout of a blocked kernel and the instructions it emits.

A conv2d is blocked the same way, over images (rows), output channels (columns) and input
channels (inner): a conv is a sum over input channels, so partial sums add up.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from chipsim.codegen.contraction import (
    BlockedKernel,
    Tile,
    tile_bytes,
    tile_key,
    tile_shape,
    tile_view,
)
from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpec
from chipsim.codegen.units import compute_instrs, immediate_instr
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand
from chipsim.ir.dtypes import to_storage
from chipsim.ir.graph import Node, Value
from chipsim.ir.ops import check_attrs, get_op
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN
from chipsim.reference import reference_for
from chipsim.target import Level


@dataclass(frozen=True, slots=True)
class Blocks:
    """Tile sizes of a blocked contraction: output rows and columns, inner block, buffers."""

    rows: int
    cols: int
    inner: int
    buffers: int


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the loop nest: an output tile ``t`` and one inner block of it."""

    t: int
    tile: Tile
    first: bool  # first inner block of the tile: start the sum
    last: bool  # last inner block: run the epilogue and store


# -- the loop nest ------------------------------------------------------------------------------
def axis_blocks(bk: BlockedKernel, blocks: Blocks) -> dict[int | str, int]:
    """Block size of every output axis and of ``"k"``."""
    geo, shape = bk.geometry, bk.contraction.type.shape
    sizes: dict[int | str, int] = dict(enumerate(shape))
    for a in geo.batch_axes:
        sizes[a] = 1
    if geo.row_axis is not None:
        sizes[geo.row_axis] = min(blocks.rows, shape[geo.row_axis])
    if geo.col_axis is not None:
        sizes[geo.col_axis] = min(blocks.cols, shape[geo.col_axis])
    sizes["k"] = min(blocks.inner, geo.k)
    return sizes


def _extent(bk: BlockedKernel, axis: int | str) -> int:
    return bk.geometry.k if axis == "k" else bk.contraction.type.shape[axis]


def steps(bk: BlockedKernel, blocks: Blocks) -> Iterator[Step]:
    """The steps in order: output tiles row-major (axis 0 outermost), inner blocks innermost."""
    sizes = axis_blocks(bk, blocks)
    axes = list(sizes)  # output axes in order, then "k"
    ranges = [
        [(s, min(sizes[a], _extent(bk, a) - s)) for s in range(0, _extent(bk, a), sizes[a])]
        for a in axes
    ]
    nk = len(ranges[-1])
    for i, combo in enumerate(itertools.product(*ranges)):
        t, kk = divmod(i, nk)
        yield Step(t, dict(zip(axes, combo, strict=False)), kk == 0, kk == nk - 1)


def first_tile(bk: BlockedKernel, blocks: Blocks) -> Tile:
    return {a: (0, n) for a, n in axis_blocks(bk, blocks).items()}


# -- where each value lives -------------------------------------------------------------------
def loaded_values(bk: BlockedKernel, kernel: KernelSpec) -> list[Value]:
    """Values DMA'd tile by tile from DRAM: the operands, then DRAM epilogue inputs."""
    vals = [v for v in bk.maps if v in kernel.location and kernel.location[v].level == Level.DRAM]
    return [v for v in vals if v not in kernel.outputs]


def buffered_results(bk: BlockedKernel, kernel: KernelSpec) -> list[Value]:
    """Results computed into SRAM tile buffers (all but outputs that live on chip)."""
    on_chip = {v for v in kernel.outputs if kernel.location[v].level != Level.DRAM}
    return [v for v in bk.results if v not in on_chip]


def immediates(kernel: KernelSpec) -> list[Node]:
    """Constants the caller did not place: the ALU writes them once, whole, into SRAM."""
    return [n for n in kernel.nodes if n.is_constant and n.output not in kernel.location]


def in_place(bk: BlockedKernel, kernel: KernelSpec) -> dict[Value, Value]:
    """Epilogue results that overwrite an input's tile buffer, mapped to that input.

    ``relu(C + bias)`` needs one output-tile buffer, not three: an elementwise op may write
    over an input tile that nothing reads afterwards (and that is not stored), which leaves
    SRAM for larger tiles.
    """
    buffered = buffered_results(bk, kernel)
    shared: dict[Value, Value] = {}
    for i, node in enumerate(bk.epilogue):
        if node.output not in buffered:
            continue
        read_later = {v for n in bk.epilogue[i + 1 :] for v in n.inputs}
        for u in node.inputs:
            dead = u not in read_later and u not in kernel.outputs
            fits = node.type.dtype.itemsize <= u.type.dtype.itemsize
            if u in buffered and dead and fits:
                shared[node.output] = shared.get(u, u)
                break
    return shared


def sram_layout(
    bk: BlockedKernel, kernel: KernelSpec, blocks: Blocks, lo: int
) -> tuple[dict[Value, tuple[int, ...]], int]:
    """SRAM offsets: immediates once, then ``blocks.buffers`` tile buffers per value."""
    tile = first_tile(bk, blocks)
    offsets: dict[Value, tuple[int, ...]] = {}
    cursor = lo
    for n in immediates(kernel):
        offsets[n.output] = (cursor,)
        cursor += align_up(n.type.nbytes, ALIGN)
    shared = in_place(bk, kernel)
    for v in loaded_values(bk, kernel) + buffered_results(bk, kernel):
        if v in shared:
            offsets[v] = offsets[shared[v]]
            continue
        size = align_up(tile_bytes(v, bk.maps[v], tile), ALIGN)
        offsets[v] = tuple(cursor + b * size for b in range(blocks.buffers))
        cursor += blocks.buffers * size
    return offsets, cursor


# -- instructions for one tile ------------------------------------------------------------------
def contraction_instr(
    bk: BlockedKernel,
    srcs: tuple[Operand, ...],
    dst: Operand,
    accumulate: bool,
    chip: Chip,
    kernel: str,
    label: str,
) -> Instr:
    """``dst = a @ b`` (``dst += a @ b`` when ``accumulate``) for one tile, on the right unit."""
    node = bk.contraction
    out_type = node.type.with_shape(dst.shape)
    attrs = check_attrs(get_op(node.op), node.attrs)
    (instr,) = compute_instrs(node, srcs, dst, out_type, attrs, chip, kernel, label)
    if not accumulate:
        return instr
    partial = instr.fn

    def add_to(a, b, c):
        return to_storage(c + partial(a, b), out_type.dtype)

    return replace(instr, srcs=(*srcs, dst), fn=add_to if partial else None)


def epilogue_instrs(
    node: Node, srcs: tuple[Operand, ...], dst: Operand, chip: Chip, kernel: str, label: str
) -> list[Instr]:
    out_type = node.type.with_shape(dst.shape)
    opdef = get_op(node.op)
    attrs = opdef.tile_attrs(check_attrs(opdef, node.attrs), out_type)
    return compute_instrs(node, srcs, dst, out_type, attrs, chip, kernel, label)


# -- emission ----------------------------------------------------------------------------------
class _Emitter:
    """Writes the instructions of a blocked kernel (one object per call)."""

    def __init__(
        self, kernel: KernelSpec, chip: Chip, bk: BlockedKernel, blocks: Blocks, names, lo: int
    ) -> None:
        self.k, self.chip, self.bk, self.blocks, self.names = kernel, chip, bk, blocks, names
        self.offsets, _ = sram_layout(bk, kernel, blocks, lo)
        self.loaded = loaded_values(bk, kernel)
        self.buffered = set(buffered_results(bk, kernel))
        self.operands = [v for v in self.loaded if v in bk.contraction.inputs]
        self.epilogue_inputs = [v for v in self.loaded if v not in bk.contraction.inputs]
        self.made: dict[tuple, Instr] = {}  # contraction instructions by tile shapes

    def view(self, v: Value, tile: Tile, t: int) -> Operand:
        """Where ``v``'s slice for ``tile`` is: a result buffer or the tensor itself."""
        if v in self.buffered:
            offs = self.offsets[v]
            shape = tile_shape(v, self.bk.maps[v], tile)
            return Operand(
                Level.SRAM, offs[t % len(offs)], shape, v.dtype.name, None, self.names[v]
            )
        if v in self.k.location:
            loc = self.k.location[v]
            return tile_view(v, self.bk.maps[v], tile, loc.level, loc.offset, self.names[v])
        return tile_view(v, self.bk.maps[v], tile, Level.SRAM, self.offsets[v][0], self.names[v])

    def plan_loads(self, plan: list[Step]) -> tuple[list[list[Instr]], list[dict[Value, Operand]]]:
        """Per step: the loads it needs and where each loaded value's tile then sits."""
        last: dict[Value, tuple] = {}
        count = dict.fromkeys(self.loaded, -1)
        current: dict[Value, Operand] = {}
        # a slice is loaded again on later rounds of the loop nest: its DRAM view is made once
        slices: dict[tuple[Value, tuple], Operand] = {}
        loads, views = [], []
        for step in plan:
            mine = []
            for v in self.operands + (self.epilogue_inputs if step.first else []):
                key = tile_key(self.bk.maps[v], step.tile)
                if last.get(v) == key:
                    continue  # the same tile as last time: reuse it
                last[v], count[v] = key, count[v] + 1
                offs = self.offsets[v]
                src = slices.get((v, key))
                if src is None:
                    loc = self.k.location[v]
                    src = tile_view(
                        v, self.bk.maps[v], step.tile, Level.DRAM, loc.offset, self.names[v]
                    )
                    slices[(v, key)] = src
                dst = Operand(
                    Level.SRAM, offs[count[v] % len(offs)], src.shape, src.dtype, None, src.name
                )
                mine.append(dma("load", src, dst, self.k.name))
                current[v] = dst
            loads.append(mine)
            views.append(dict(current))
        return loads, views

    def emit(self) -> list[Instr]:
        prog = []
        for n in immediates(self.k):
            dst = Operand(Level.SRAM, self.offsets[n.output][0], n.type.shape, n.type.dtype.name)
            prog.append(immediate_instr(n, dst, self.chip, self.k.name))
        plan = list(steps(self.bk, self.blocks))
        loads, views = self.plan_loads(plan)
        ahead = 1 if self.blocks.buffers > 1 else 0  # prefetch only into a free buffer
        prog += loads[0] if ahead else []
        for s, step in enumerate(plan):
            if s + ahead < len(plan):
                prog += loads[s + ahead]
            prog.append(self.multiply(step, views[s]))
            if step.last:
                prog += self.finish(step, views[s])
        return prog

    def _src(self, v: Value, step: Step, loaded: dict[Value, Operand]) -> Operand:
        return loaded[v] if v in loaded else self.view(v, step.tile, step.t)

    def multiply(self, step: Step, loaded: dict[Value, Operand]) -> Instr:
        head = self.bk.contraction
        srcs = tuple(self._src(v, step, loaded) for v in head.inputs)
        dst = self.view(head.output, step.tile, step.t)
        label = f"{head.op} tile {step.t}" + (
            "" if step.first and step.last else f" k{step.tile['k'][0]}"
        )
        # Tiles of the same shapes differ only in their operands and label: the instruction
        # (unit, work, FLOPs, semantics) is made once per shape and copied for the others.
        key = (tuple(s.shape for s in srcs), dst.shape, step.first)
        made = self.made.get(key)
        if made is None:
            made = contraction_instr(
                self.bk, srcs, dst, not step.first, self.chip, self.k.name, label
            )
            self.made[key] = made
            return made
        ins = srcs if step.first else (*srcs, dst)
        return Instr(
            made.opcode, made.unit, ins, (dst,), made.work, made.hw_ops, made.flops, made.fn,
            made.kernel, label,
        )  # fmt: skip

    def finish(self, step: Step, loaded: dict[Value, Operand]) -> list[Instr]:
        """The epilogue on the finished output tile, then the stores of the outputs."""
        instrs: list[Instr] = []
        for node in self.bk.epilogue:
            srcs = tuple(self._src(v, step, loaded) for v in node.inputs)
            dst = self.view(node.output, step.tile, step.t)
            instrs += epilogue_instrs(
                node, srcs, dst, self.chip, self.k.name, f"{node.op} tile {step.t}"
            )
        for v in self.k.outputs:
            loc = self.k.location[v]
            if loc.level == Level.DRAM:
                src = self.view(v, step.tile, step.t)
                dst = tile_view(
                    v, self.bk.maps[v], step.tile, Level.DRAM, loc.offset, self.names[v]
                )
                instrs.append(dma("store", src, dst, self.k.name))
        return instrs


@reference_for("instruction_generation")
def emit_blocked(
    kernel: KernelSpec,
    chip: Chip,
    bk: BlockedKernel,
    blocks: Blocks,
    names: dict[Value, str],
    lo: int,
) -> list[Instr]:
    """The instructions of ``kernel`` in blocked form (see the module docstring)."""
    return _Emitter(kernel, chip, bk, blocks, names, lo).emit()
