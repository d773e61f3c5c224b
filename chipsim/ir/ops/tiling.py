"""How a kernel of several ops is cut into row tiles: the ops' own row rules, composed.

Each op says, in its definition (:attr:`~chipsim.ir.ops.OpDef.rows`), which of its inputs a
block of output rows needs row by row and which it needs whole. A *kernel* (a group of ops
run as one launch) can be tiled over rows only if every op in it follows the same rows and no
value made inside the kernel is needed whole by a later op (it would have to be complete
before the first tile). :func:`row_tiling` composes the rules, from the kernel's outputs
backwards; the code generator tiles by its answer and the fusion cost model asks it whether a
kernel streams, so the two can never disagree.

This module registers no op; it lives beside the registry because it reads nothing else.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((256, 16, 16), f32)
    >>> g = b.build(b.op("transpose", x, perm=(0, 2, 1)))
    >>> row_tiling(g.nodes, g.outputs).rows  # row i of the result is row i of x, permuted
    256
    >>> b = GraphBuilder()
    >>> w = b.input((64, 64), f32)
    >>> g = b.build(b.op("matmul", b.input((256, 64), f32), b.op("relu", w)))
    >>> row_tiling(g.nodes, g.outputs) is None  # relu(w) is needed whole by every row tile
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chipsim.ir.ops.registry import get_op

if TYPE_CHECKING:  # types only: the op registry sits below the graph (graph.py imports it)
    from chipsim.ir.graph import Node, Value


@dataclass(frozen=True)
class RowTiling:
    """A kernel's row tiling: how many rows, and which values and uses follow them.

    Attributes:
        rows: the number of rows (axis 0 of every output) the kernel is tiled over.
        rowed: for each value the kernel reads or makes, True if every use takes it row by
            row (so it can be sliced with the tiles), False if some use needs it whole.
        uses: for ``(i, j)`` (input ``j`` of the ``i``-th non-constant node), whether that use
            is sliced by rows.
    """

    rows: int
    rowed: Mapping[Value, bool]
    uses: Mapping[tuple[int, int], bool]


def row_flags(node: Node, rows: int) -> tuple[bool, ...] | None:
    """The op's row rule for ``node`` in a kernel tiled over ``rows`` output rows: per input,
    sliced with the rows (True) or needed whole (False); None if the node cannot follow."""
    out = node.type
    if out.rank == 0 or out.shape[0] != rows:
        return None
    return get_op(node.op).row_inputs([v.type for v in node.inputs], out, node.attrs)


def row_tiling(nodes: Sequence[Node], outputs: Sequence[Value]) -> RowTiling | None:
    """The row tiling of a kernel running ``nodes`` (topological order) and writing
    ``outputs``, or None if it cannot be cut into row tiles (it must run whole)."""
    compute = [n for n in nodes if not n.is_constant]
    rows = outputs[0].shape[0] if outputs and outputs[0].type.rank else 0
    if rows < 2 or any(v.type.rank == 0 or v.shape[0] != rows for v in outputs):
        return None
    need: dict[Value, bool] = dict.fromkeys(outputs, True)
    uses: dict[tuple[int, int], bool] = {}
    for i in range(len(compute) - 1, -1, -1):
        node = compute[i]
        flags = row_flags(node, rows)
        if flags is None or not need.get(node.output, True):
            return None
        for j, (v, flag) in enumerate(zip(node.inputs, flags, strict=True)):
            need[v] = need.get(v, True) and flag
            uses[(i, j)] = flag
    return RowTiling(rows, need, uses)
