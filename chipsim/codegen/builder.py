"""Writing a kernel's instructions yourself: the instruction-building API.

The code generator lowers a kernel of one contraction and an elementwise epilogue (a matmul
with its bias and activation, a conv with its folded batchnorm and relu) as a loop nest over
tiles (:mod:`chipsim.codegen.blocked`). A :class:`KernelBuilder` lets you write that loop
nest: you choose the tiles and the SRAM offsets, and call

=====================================  ============================================  =======
call                                   instruction                                    unit
=====================================  ============================================  =======
``load(value, tile, at)``              DMA a tile of a DRAM tensor into SRAM at ``at``  DMA
``contract(tile, at, inputs, acc)``    the contraction on one tile (``+=`` with acc)  Tensor
``epilogue(value, tile, at, inputs)``  one epilogue op on the output tile             SIMD
``store(value, tile, src)``            DMA a finished output tile back to DRAM        DMA
=====================================  ============================================  =======

Each call makes its instruction with the code generator's own constructors (the one DMA
builder, :func:`~chipsim.codegen.blocked.contraction_instr`,
:func:`~chipsim.codegen.blocked.epilogue_instrs`), so an instruction you write costs exactly
what the compiler's would. A tile is ``kb.tile(rows=(start, size), cols=(start, size),
inner=(start, size))``: rows and columns of the output (a conv's images and output channels),
and a block of the inner dimension (a conv's input channels).

Every call checks what it can at once and raises a :class:`~chipsim.errors.PlanError` that
names the instruction: a tile outside its tensor, a buffer past the end of SRAM, an operand
that is not in SRAM where you said (nothing loaded it, or a later load overwrote it), a
store of a tile that is not finished. The program is plain data (:meth:`KernelBuilder.data`),
so the grader rebuilds it in its own process with :func:`assemble` and never runs your code.

Example:
    >>> from chipsim.hw import get_chip
    >>> from chipsim.ir import GraphBuilder, f32
    >>> g = GraphBuilder("mm")
    >>> x, w = g.input((8, 16), f32), g.input((16, 8), f32)
    >>> kb = KernelBuilder(g.build(g.op("relu", g.op("matmul", x, w))), get_chip("edge-npu"))
    >>> t = kb.tile(rows=(0, 8), cols=(0, 8), inner=(0, 16))
    >>> a, b = kb.load("%0", t, at=0), kb.load("%1", t, at=512)
    >>> c = kb.contract(t, at=1024, inputs={"%0": a, "%1": b})
    >>> r = kb.epilogue("%3", t, at=1024, inputs={"%2": c})
    >>> kb.store("%3", t, src=r)
    >>> len(kb.instructions), kb.data()[2]["op"]
    (5, 'contract')
    >>> kb.missing()   # every output element is stored
    ''
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from chipsim.codegen.block_sizes import choose_blocks
from chipsim.codegen.blocked import Blocks, contraction_instr, emit_blocked, epilogue_instrs
from chipsim.codegen.contraction import BlockedKernel, Tile, match_blocked, tile_shape, tile_view
from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.ledger import SramLedger, Stores, key_text, tile_key
from chipsim.codegen.program_data import offsets, replay, tile_data
from chipsim.errors import PlanError
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Instr, Operand
from chipsim.i18n import listing, tr
from chipsim.ir.graph import Graph, Value
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN
from chipsim.reference import reference_for
from chipsim.target import Level


def dram_layout(graph: Graph) -> dict[Value, Location]:
    """Where a one-kernel graph's tensors live: inputs, then outputs, densely in DRAM."""
    where, cursor = {}, 0
    for v in (*graph.inputs, *graph.outputs):
        if v not in where:
            where[v] = Location(Level.DRAM, cursor)
            cursor += align_up(v.type.nbytes, ALIGN)
    return where


def graph_kernel(graph: Graph) -> KernelSpec:
    """The whole of ``graph`` as one kernel whose inputs and outputs are in DRAM."""
    return KernelSpec.of(graph.nodes, graph.outputs, dram_layout(graph))


class KernelBuilder:
    """Build the instructions of a one-kernel graph (a contraction plus its epilogue) by hand.

    Args:
        graph: the kernel's graph: one matmul or conv2d, then elementwise ops on its output.
        chip: the chip (SRAM size, unit costs).
    """

    def __init__(self, graph: Graph, chip: Chip) -> None:
        self.graph, self.chip = graph, chip
        self.kernel = graph_kernel(graph)
        bk = match_blocked(self.kernel)
        if bk is None or bk.geometry.batch_axes:
            raise PlanError(
                tr(
                    "graph {name!r} is not one matmul or conv2d followed by elementwise ops on "
                    "its output: a KernelBuilder lowers exactly that kind of kernel",
                    name=graph.name,
                )
            )
        self.blocked: BlockedKernel = bk
        self.names = graph.names()
        self._values = {n: v for v, n in self.names.items()}
        self.instructions: list[Instr] = []
        self._data: list[dict[str, Any]] = []
        self._sram_ledger = SramLedger(self.names)  # what each SRAM range holds
        self._stores = Stores()  # which tiles of each output were stored
        #: the tile sizes, when the code generator chose them (:func:`generated`)
        self.blocks: Blocks | None = None

    # -- what the kernel is ----------------------------------------------------------------
    @property
    def sram_bytes(self) -> int:
        """The SRAM the kernel may use, all of it (``[0, sram_bytes)``)."""
        return self.chip.sram.capacity_bytes

    @property
    def contraction(self) -> Value:
        """The contraction's output value (its tiles are what :meth:`contract` computes)."""
        return self.blocked.contraction.output

    @property
    def operands(self) -> list[str]:
        """The contraction's two inputs (``[x, w]``), the tensors its tiles are cut from."""
        return [self.names[v] for v in self.blocked.contraction.inputs]

    @property
    def epilogue_ops(self) -> list[tuple[str, str, list[str]]]:
        """The epilogue in order, as ``(value it computes, op, [values it reads])``."""
        return [(self.names[n.output], n.op, [self.names[v] for v in n.inputs])
                for n in self.blocked.epilogue]  # fmt: skip

    @property
    def outputs(self) -> list[str]:
        """The values the kernel must store to DRAM."""
        return [self.names[v] for v in self.kernel.outputs]

    @property
    def extents(self) -> dict[str, int]:
        """How far ``rows``, ``cols`` and ``inner`` go (the output's rows and columns, K)."""
        geo, shape = self.blocked.geometry, self.blocked.contraction.type.shape
        return {
            "rows": shape[geo.row_axis] if geo.row_axis is not None else 1,
            "cols": shape[geo.col_axis] if geo.col_axis is not None else 1,
            "inner": geo.k,
        }

    def value(self, name: str) -> Value:
        """The value printed as ``name`` (``"%2"``); a clear error for an unknown name."""
        if isinstance(name, Value) and name in self.names:
            return name
        if name not in self._values:
            raise PlanError(tr("the kernel has no value {name!r}; its values are {values} "
                               "(print the graph to see them)", name=name,
                               values=listing(self._values)))  # fmt: skip
        return self._values[name]

    def tile_bytes(self, name: str, tile: Tile) -> int:
        """Bytes of ``name``'s slice for ``tile`` (what one buffer of it needs)."""
        v = self.value(name)
        return math.prod(tile_shape(v, self.blocked.maps[v], tile)) * v.dtype.itemsize

    def tile(
        self,
        rows: tuple[int, int] = (0, 0),
        cols: tuple[int, int] = (0, 0),
        inner: tuple[int, int] = (0, 0),
    ) -> Tile:
        """A tile: ``(start, size)`` of the output's rows and columns and of the inner
        dimension; a size of 0 means "all of it". Every other axis is taken whole."""
        geo, shape = self.blocked.geometry, self.blocked.contraction.type.shape
        tile: dict[int | str, tuple[int, int]] = {a: (0, n) for a, n in enumerate(shape)}
        for label, axis, span in (("rows", geo.row_axis, rows), ("cols", geo.col_axis, cols),
                                  ("inner", "k", inner)):  # fmt: skip
            extent = self.extents[label]
            start, size = (int(span[0]), int(span[1])) if len(span) == 2 else (-1, -1)
            size = size or extent - start
            if start < 0 or size <= 0 or start + size > extent:
                raise PlanError(tr("tile {label}=({start}, {size}) is outside 0..{extent}: "
                                   "give (start, size) with start + size <= {extent}",
                                   label=label, start=span[0], size=span[1],
                                   extent=extent))  # fmt: skip
            if axis is not None:
                tile[axis] = (start, size)
        return tile

    # -- the instructions ------------------------------------------------------------------
    def load(self, value: str, tile: Tile, at: int) -> Operand:
        """DMA ``value``'s slice for ``tile`` from DRAM into SRAM at byte ``at``."""
        v = self._input(value, "load")
        src = self._dram(v, tile)
        dst = self._sram(v, tile, at, "load")
        self._emit(dma("load", src, dst, self.kernel.name, f"load {self.names[v]}"),
                   {"op": "load", "value": self.names[v], "tile": _tile_data(self, tile),
                    "at": at})  # fmt: skip
        self._hold(at, dst, v, tile, partial=False)
        return dst

    def contract(
        self,
        tile: Tile,
        at: int,
        inputs: Mapping[str, Operand | int],
        accumulate: bool = False,
    ) -> Operand:
        """The contraction on ``tile`` into SRAM at ``at``: ``=`` its inner block, or ``+=``
        with ``accumulate`` (the partial sum of the same output tile must be there)."""
        head = self.blocked.contraction
        srcs = tuple(self._operand(inputs, u, tile, "contract") for u in head.inputs)
        dst = self._sram(head.output, tile, at, "contract")
        out_key = tile_key(self.blocked.maps[head.output], tile)
        if accumulate:
            held = self._sram_ledger.get(at)
            if held is None or held.value is not head.output or held.key != out_key:
                raise PlanError(
                    tr(
                        "{here}: accumulate=True adds to the partial sum of this output tile at "
                        "SRAM {at}, but {what}: start the sum with accumulate=False on the first "
                        "inner block",
                        here=self._here("contract"),
                        at=at,
                        what=self._sram_ledger.describe(at),
                    )
                )
        k0, kn = tile["k"]
        label = f"{head.op} {_rows_cols(self, tile)} k{k0}"
        instr = contraction_instr(
            self.blocked, srcs, dst, accumulate, self.chip, self.kernel.name, label
        )
        data = {"op": "contract", "tile": _tile_data(self, tile), "at": at,
                "inputs": offsets(inputs), "accumulate": bool(accumulate)}  # fmt: skip
        self._emit(instr, data)
        partial = k0 + kn < self.extents["inner"]
        self._hold(at, dst, head.output, tile, partial=partial)
        return dst

    def epilogue(
        self, value: str, tile: Tile, at: int, inputs: Mapping[str, Operand | int]
    ) -> Operand:
        """The epilogue op that computes ``value``, on ``tile``, into SRAM at ``at``."""
        v = self.value(value)
        node = next((n for n in self.blocked.epilogue if n.output is v), None)
        if node is None:
            known = listing(self.names[n.output] for n in self.blocked.epilogue)
            raise PlanError(tr("{here}: {value!r} is not computed by the epilogue; its values "
                               "are {known}", here=self._here("epilogue"), value=value,
                               known=known))  # fmt: skip
        srcs = tuple(self._operand(inputs, u, tile, "epilogue") for u in node.inputs)
        dst = self._sram(v, tile, at, "epilogue")
        label = f"{node.op} {_rows_cols(self, tile)}"
        for instr in epilogue_instrs(node, srcs, dst, self.chip, self.kernel.name, label):
            self._emit(instr, None)
        self._data.append({"op": "epilogue", "value": self.names[v],
                           "tile": _tile_data(self, tile), "at": at,
                           "inputs": offsets(inputs)})  # fmt: skip
        self._hold(at, dst, v, tile, partial=False)
        return dst

    def store(self, value: str, tile: Tile, src: Operand | int) -> None:
        """DMA ``value``'s finished tile from SRAM (``src``: its operand or offset) to DRAM."""
        v = self.value(value)
        if v not in self.kernel.outputs:
            outs = listing(self.names[u] for u in self.kernel.outputs)
            raise PlanError(tr("{here}: {value!r} is not an output of the kernel; store {outs}",
                               here=self._here("store"), value=value, outs=outs))  # fmt: skip
        at = src.offset if isinstance(src, Operand) else int(src)
        sram = self._operand({self.names[v]: at}, v, tile, "store")
        self._emit(dma("store", sram, self._dram(v, tile), self.kernel.name,
                       f"store {self.names[v]}"),
                   {"op": "store", "value": self.names[v], "tile": _tile_data(self, tile),
                    "src": at})  # fmt: skip
        self._stores.add(v, tile_key(self.blocked.maps[v], tile), len(self.instructions) - 1)

    # -- the result ------------------------------------------------------------------------
    def data(self) -> list[dict[str, Any]]:
        """The program as plain data (JSON): what a test cell hands to the grader."""
        return [dict(d) for d in self._data]

    def missing(self) -> str:
        """Empty when every element of every output was stored; else which was not."""
        return self._stores.missing(self.kernel.outputs, self.blocked.maps, self.names)

    def stored_by(self, value: str, element: Sequence[int]) -> int | None:
        """The instruction that last stored ``element`` (an index) of output ``value``."""
        v = self.value(value)
        return self._stores.last(v, self.blocked.maps[v], element)

    def __len__(self) -> int:
        return len(self.instructions)

    def __str__(self) -> str:
        return "\n".join(f"#{i:<4} {ins}" for i, ins in enumerate(self.instructions))

    # -- checks ----------------------------------------------------------------------------
    def _here(self, op: str) -> str:
        return tr("instruction #{n} ({op})", n=len(self.instructions), op=op)

    def _input(self, name: str, op: str) -> Value:
        v = self.value(name)
        if v not in self.kernel.location or v in self.kernel.outputs:
            loadable = [self.names[u] for u in self.blocked.maps if u in self.kernel.inputs]
            raise PlanError(tr("{here}: {name!r} is not an input in DRAM; load one of {inputs}",
                               here=self._here(op), name=name,
                               inputs=listing(loadable)))  # fmt: skip
        return v

    def _dram(self, v: Value, tile: Tile) -> Operand:
        where = self.kernel.location[v]
        return tile_view(v, self.blocked.maps[v], tile, Level.DRAM, where.offset, self.names[v])

    def _sram(self, v: Value, tile: Tile, at: int, op: str) -> Operand:
        if not isinstance(at, int) or isinstance(at, bool) or at < 0 or at % ALIGN:
            raise PlanError(tr("{here}: SRAM offset {at!r} must be an int >= 0 and a multiple "
                               "of {align}", here=self._here(op), at=at, align=ALIGN))  # fmt: skip
        shape = tile_shape(v, self.blocked.maps[v], tile)
        op_ = Operand(Level.SRAM, at, shape, v.dtype.name, None, self.names[v])
        if op_.byte_range()[1] > self.sram_bytes:
            raise PlanError(
                tr(
                    "{here}: {tile} ({nbytes:,} B) at SRAM {at:,} ends past the {sram:,} B of "
                    "SRAM: use smaller tiles or a lower offset",
                    here=self._here(op),
                    tile=self.names[v] + key_text(tile_key(self.blocked.maps[v], tile)),
                    nbytes=op_.nbytes,
                    at=at,
                    sram=self.sram_bytes,
                )
            )
        return op_

    def _operand(self, inputs: Mapping[str, Any], v: Value, tile: Tile, op: str) -> Operand:
        """The SRAM operand of ``v``'s tile that ``inputs`` points at, checked to hold it."""
        name = self.names[v]
        if not isinstance(inputs, Mapping) or name not in inputs:
            raise PlanError(tr("{here}: say where {name}'s tile is: inputs={{{quoted}: its SRAM "
                               "operand or offset}}", here=self._here(op), name=name,
                               quoted=repr(name)))  # fmt: skip
        given = inputs[name]
        at = given.offset if isinstance(given, Operand) else given
        if not isinstance(at, int) or isinstance(at, bool):
            raise PlanError(tr("{here}: inputs[{quoted}] must be an Operand or an int",
                               here=self._here(op), quoted=repr(name)))  # fmt: skip
        key = tile_key(self.blocked.maps[v], tile)
        held = self._sram_ledger.get(at)
        if held is None or held.value is not v or held.key != key or held.partial:
            want = f"{name}{key_text(key)}"
            raise PlanError(tr("{here}: reads {want} at SRAM {at}, but {what}: load or compute "
                               "it there first", here=self._here(op), want=want, at=at,
                               what=self._sram_ledger.describe(at)))  # fmt: skip
        return Operand(Level.SRAM, at, tile_shape(v, self.blocked.maps[v], tile), v.dtype.name,
                       None, name)  # fmt: skip

    def _hold(self, at: int, op: Operand, v: Value, tile: Tile, partial: bool) -> None:
        key = tile_key(self.blocked.maps[v], tile)
        self._sram_ledger.hold(at, op.byte_range(), v, key, len(self.instructions) - 1, partial)

    def _emit(self, instr: Instr, data: dict[str, Any] | None) -> None:
        self.instructions.append(instr)
        if data is not None:
            self._data.append(data)


def assemble(graph: Graph, chip: Chip, data: Sequence[Any]) -> KernelBuilder:
    """Rebuild a program from its data form (:meth:`KernelBuilder.data`), checking every
    instruction as it is added (:func:`~chipsim.codegen.program_data.replay`); raises
    :class:`PlanError` naming the first bad one."""
    return replay(KernelBuilder(graph, chip), data)


@reference_for("instruction_generation")
def generated(
    graph: Graph, chip: Chip, *, double_buffer: bool = True, blocks: Blocks | None = None
) -> KernelBuilder:
    """The code generator's own program for the kernel (what ``chipsim.compile`` emits for a
    blocked kernel): its tile sizes (or ``blocks``), its loop nest, its double buffering."""
    kb = KernelBuilder(graph, chip)
    window = (0, kb.sram_bytes)
    chosen = blocks or choose_blocks(kb.blocked, kb.kernel, chip, window, double_buffer)
    if chosen is None:
        raise PlanError(tr("graph {name!r}: not even the smallest tiles fit the SRAM",
                           name=graph.name))  # fmt: skip
    kb.blocks = chosen
    kb.instructions = emit_blocked(kb.kernel, chip, kb.blocked, chosen, kb.names, 0)
    return kb


def _rows_cols(kb: KernelBuilder, tile: Tile) -> str:
    geo = kb.blocked.geometry
    r = tile[geo.row_axis] if geo.row_axis is not None else (0, 1)
    c = tile[geo.col_axis] if geo.col_axis is not None else (0, 1)
    return f"r{r[0]}:{r[0] + r[1]} c{c[0]}:{c[0] + c[1]}"


def _tile_data(kb: KernelBuilder, tile: Tile) -> dict[str, list[int]]:
    return tile_data(tile, kb.blocked.geometry.row_axis, kb.blocked.geometry.col_axis)
