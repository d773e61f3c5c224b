"""Choosing the tile sizes of a blocked contraction: the candidates and the cost model.

A blocked kernel (:mod:`chipsim.codegen.blocked`) is cut into output tiles over rows and
columns and, when needed, inner blocks. Its tile sizes are chosen in one place,
:func:`choose_blocks`: it tries every candidate (powers of two times the tensor core's tile,
and the full size) and keeps the fastest by the cost model of :func:`estimate_cycles`, which
uses the chip's own instruction costs. :func:`count_loads` counts how often a tile changes
along the loop nest (the row-tiling planner uses it too).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterator
from dataclasses import replace

from chipsim.codegen.blocked import (
    Blocks,
    _extent,
    axis_blocks,
    contraction_instr,
    epilogue_instrs,
    first_tile,
    loaded_values,
    sram_layout,
)
from chipsim.codegen.contraction import BlockedKernel, tile_shape
from chipsim.codegen.dma import dma
from chipsim.codegen.kernel import KernelSpec
from chipsim.hw.chip import Chip
from chipsim.hw.isa import Operand, cost
from chipsim.ir.graph import Value
from chipsim.reference import reference_for
from chipsim.target import Level

MIN_BLOCK = 16  # smallest tile edge tried first (smaller tiles only when nothing else fits)
NEAR_BEST = 0.02  # estimates this close to the fastest count as equally fast


# -- choosing tile sizes ----------------------------------------------------------------------
def _candidates(full: int, unit: int) -> list[int]:
    """The full size, then ``unit * 2**i`` below it (largest first)."""
    sizes, s = [], unit
    while s < full:
        sizes.append(s)
        s *= 2
    return [full, *reversed(sizes)]


def count_loads(bk: BlockedKernel, blocks: Blocks, axes_used: list[int | str]) -> int:
    """How many times a tile indexed by ``axes_used`` changes along the loop nest.

    The loops run over the output axes, then ``"k"``. A tile changes whenever a loop at or
    outside the innermost loop it depends on advances: the product of those loops' counts.
    """
    sizes = axis_blocks(bk, blocks)
    counts = [-(-_extent(bk, a) // sizes[a]) for a in sizes]
    order = list(sizes)
    used = [order.index(a) for a in axes_used if counts[order.index(a)] > 1]
    return math.prod(counts[: max(used) + 1]) if used else 1


def estimate_cycles(bk: BlockedKernel, kernel: KernelSpec, chip: Chip, blocks: Blocks) -> int:
    """Cost model for :func:`choose_blocks`: the busiest unit's time plus filling the pipe.

    DMA, tensor core and SIMD run side by side, so with double buffering a kernel takes
    about as long as its busiest unit; the first loads and the last store add to it.
    """
    tile = first_tile(bk, blocks)
    nsteps = count_loads(bk, blocks, list(tile))
    ntiles = count_loads(bk, blocks, [a for a in tile if a != "k"])
    sram = {
        v: Operand(Level.SRAM, 0, tile_shape(v, bk.maps[v], tile), v.dtype.name) for v in bk.maps
    }
    dram = {v: Operand(Level.DRAM, 0, s.shape, s.dtype) for v, s in sram.items()}

    def move(v: Value) -> int:
        return cost(dma("load", dram[v], sram[v], kernel.name), chip)

    fill = dma_time = 0
    for v in loaded_values(bk, kernel):
        fill += move(v)
        dma_time += move(v) * count_loads(bk, blocks, [a for a in bk.maps[v] if a is not None])
    for v in kernel.outputs:
        if kernel.location[v].level == Level.DRAM:
            dma_time += move(v) * ntiles
            fill += move(v)
    head = bk.contraction
    mma = contraction_instr(
        bk, tuple(sram[v] for v in head.inputs), sram[head.output], nsteps > ntiles, chip, "", ""
    )
    simd = sum(
        cost(i, chip)
        for n in bk.epilogue
        for i in epilogue_instrs(n, tuple(sram[v] for v in n.inputs), sram[n.output], chip, "", "")
    )
    busiest = max(dma_time, cost(mma, chip) * nsteps, simd * ntiles)
    return busiest + fill + simd


def _candidate_blocks(bk: BlockedKernel, chip: Chip, smallest: int) -> Iterator[list[Blocks]]:
    """Candidate tiles, larger first: sizes are the full size or ``unit * 2**i`` >= ``smallest``.

    Yields, for each (rows, columns), the inner sizes from largest to smallest.
    """
    geo, shape = bk.geometry, bk.contraction.type.shape
    tm, tn, tk = chip.tensor_core.tile
    unit_rows = geo.row_unit or tm  # the op says (a conv's rows are whole images: 1)

    def sizes(full: int, unit: int) -> list[int]:
        return [n for n in _candidates(full, unit) if n >= smallest or n == full]

    rows = sizes(shape[geo.row_axis], unit_rows) if geo.row_axis is not None else [1]
    cols = sizes(shape[geo.col_axis], tn) if geo.col_axis is not None else [1]
    inner = sizes(geo.k, tk)
    for r, c in itertools.product(rows, cols):
        yield [Blocks(r, c, k, 2) for k in inner]


# A memo of choose_blocks, a pure function of what its key holds. A model's repeated layers
# give blocked kernels that differ only in their addresses and names, which the choice never
# reads, and each kernel is planned several times (fits, scratch, lowering): without the memo
# the search below is most of the code generator's time on GPT-2 small. Bounded; a hit
# returns exactly what the search would.
_CHOSEN: dict[Hashable, Blocks | None] = {}
_CHOSEN_LIMIT = 4096


@reference_for("instruction_generation")
def choose_blocks(
    bk: BlockedKernel, kernel: KernelSpec, chip: Chip, window: tuple[int, int], double_buffer: bool
) -> Blocks | None:
    """The tile sizes that fit ``window`` and run fastest by :func:`estimate_cycles`.

    The rules, in order:

    1. double buffering when two buffers per tile fit, else single buffers;
    2. blocks of at least ``MIN_BLOCK`` when they fit (smaller ones waste fixed costs);
    3. for given rows and columns, the largest inner block that fits: a larger one never
       moves more bytes and takes fewer steps;
    4. among the candidates within ``NEAR_BEST`` of the fastest estimate, the one with the
       fewest steps (fewer, larger instructions), then the larger tiles.

    None when not even the smallest tiles fit. ``bk`` is ``kernel``'s blocked form
    (:func:`~chipsim.codegen.contraction.match_blocked`).
    """
    key = (kernel.signature(levels_only=True), chip, window, double_buffer)
    if key not in _CHOSEN:
        if len(_CHOSEN) >= _CHOSEN_LIMIT:
            _CHOSEN.clear()
        _CHOSEN[key] = search_blocks(bk, kernel, chip, window, double_buffer)
    return _CHOSEN[key]


@reference_for("instruction_generation")
def search_blocks(
    bk: BlockedKernel, kernel: KernelSpec, chip: Chip, window: tuple[int, int], double_buffer: bool
) -> Blocks | None:
    """:func:`choose_blocks` without its memo: try every candidate."""
    lo, hi = window
    for buffers in (2, 1) if double_buffer else (1,):
        for smallest in (MIN_BLOCK, 1):
            fitting = []
            for options in _candidate_blocks(bk, chip, smallest):
                for blocks in options:
                    blocks = replace(blocks, buffers=buffers)
                    if sram_layout(bk, kernel, blocks, lo)[1] <= hi:
                        fitting.append(blocks)
                        break
            if fitting:
                return _fastest(bk, kernel, chip, fitting)
    return None


def _fastest(bk: BlockedKernel, kernel: KernelSpec, chip: Chip, fitting: list[Blocks]) -> Blocks:
    est = [estimate_cycles(bk, kernel, chip, b) for b in fitting]
    near = [b for b, e in zip(fitting, est, strict=False) if e <= min(est) * (1 + NEAR_BEST)]
    return min(near, key=lambda b: count_loads(bk, b, list(first_tile(bk, b))))
