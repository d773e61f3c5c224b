"""How much on-chip memory (SRAM) one tile of a fused kernel needs: a simple estimate.

A fused kernel runs over its output in *tiles of rows*. The *rows* of a tensor are all its
axes but the last, flattened: ``f32[8, 16, 64]`` has 128 rows of 64 elements (a scalar or a
vector is one row). To compute ``tile_rows`` rows, a kernel keeps in SRAM:

* ``tile_rows`` rows of every tensor that is streamed: the group's inputs from outside, its
  intermediates (values made and used inside the group) and the values it writes out;
* the **whole** of every *weight*: the second operand of a contraction (``b`` in ``a @ b``,
  the filter of a conv), because every output row needs all of it.

So ``working_set = sum(whole weights) + sum(min(tile_rows, rows(v)) * row_bytes(v))`` over the
other tensors the group touches. A tensor with fewer rows than the tile (a bias ``f32[64]`` has
one row) is counted whole. The estimate ignores convolution halos and assumes reductions run
along the last axis; it is meant to be easy to check by hand, not exact.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> import numpy as np
    >>> b = GraphBuilder()
    >>> x = b.input((128, 64), f32)
    >>> y = b.op("relu", b.op("matmul", x, b.const(np.zeros((64, 32), np.float32))))
    >>> g = b.build(y)
    >>> working_set_bytes(g, (1, 2), tile_rows=8)  # 64*32*4 (W) + 8*(64+32+32)*4
    12288
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.ir.graph import Graph, Value
from chipsim.ir.ops import Pattern, get_op
from chipsim.reference import reference_for


def rows(v: Value) -> int:
    """Number of rows of a tensor: the product of all axes but the last (1 for rank <= 1)."""
    shape = v.shape
    if len(shape) <= 1:
        return 1
    last = shape[-1]
    return v.type.numel // last if last else 0


def row_bytes(v: Value) -> int:
    """Bytes in one row (the last axis), or the whole tensor for a scalar."""
    last = v.shape[-1] if v.shape else 1
    return last * v.dtype.itemsize


def _weights(graph: Graph, group: Sequence[int]) -> list[Value]:
    """Second operands of the group's contractions: every tile needs all of them."""
    out: list[Value] = []
    for i in group:
        node = graph.nodes[i]
        if get_op(node.op).pattern == Pattern.CONTRACTION and len(node.inputs) > 1:
            w = node.inputs[1]
            if all(w is not o for o in out):
                out.append(w)
    return out


def touched_values(graph: Graph, group: Sequence[int]) -> list[Value]:
    """Every value the group reads or defines, in first-touch order, each once."""
    seen: list[Value] = []
    for i in group:
        node = graph.nodes[i]
        for v in (*node.inputs, node.output):
            if all(v is not s for s in seen):
                seen.append(v)
    return seen


def working_set_bytes(graph: Graph, group: Sequence[int], tile_rows: int) -> int:
    """Estimated SRAM bytes to compute ``tile_rows`` output rows of ``group`` (node indices).

    Whole weights (contraction second operands) plus ``min(tile_rows, rows)`` rows of every
    other value the group reads, makes or writes. See the module docstring.
    """
    weights = _weights(graph, group)
    total = sum(w.type.nbytes for w in weights)
    for v in touched_values(graph, group):
        if any(v is w for w in weights):
            continue
        total += min(tile_rows, rows(v)) * row_bytes(v)
    return total


def max_tile_rows(graph: Graph, group: Sequence[int], budget: int) -> int | None:
    """The largest ``tile_rows`` whose working set fits in ``budget`` bytes, or None.

    None means even a one-row tile does not fit (the group is infeasible on that chip). The
    answer never exceeds the largest row count of a streamed tensor: bigger tiles change nothing.
    """
    weights = _weights(graph, group)
    streamed = [v for v in touched_values(graph, group) if all(v is not w for w in weights)]
    most = max((rows(v) for v in streamed), default=1) or 1
    if working_set_bytes(graph, group, 1) > budget:
        return None
    lo, hi = 1, most  # working set grows with tile_rows: binary search the largest that fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if working_set_bytes(graph, group, mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@reference_for("fusion")
def fits(graph: Graph, group: Sequence[int], budget: int | None) -> bool:
    """Whether some tiling of ``group`` fits in ``budget`` bytes (always True without one)."""
    return budget is None or max_tile_rows(graph, group, budget) is not None
