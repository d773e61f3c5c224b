"""Row tiling: can a group of nodes be computed a block of rows at a time?

A kernel is tiled over axis 0 of its outputs (the *rows*). For each node we ask which of its
inputs are needed row by row (*rowed*: row i of the output needs only row i of the input)
and which are needed whole by every tile (e.g. a matmul's weight, a bias that broadcasts).
A node that mixes rows (a reduction over axis 0, a transpose that moves axis 0, ...) makes
the group untileable: it then runs as a single tile, or spills.
"""

from __future__ import annotations

from chipsim.ir.graph import Attrs, Node, Value
from chipsim.ir.ops import Pattern, get_op
from chipsim.ir.ops.reduce import reduced_axes
from chipsim.ir.types import TensorType


def _same_rows(v: Value, rank: int, rows: int) -> bool:
    return v.type.rank == rank and rank >= 1 and v.shape[0] == rows


def rowed_inputs(node: Node, rows: int) -> list[bool] | None:
    """For each input of ``node``: True if row-sliced along with the output, False if whole.

    ``None`` when the node's output rows cannot be computed independently.
    """
    out = node.type
    if out.rank == 0 or out.shape[0] != rows:
        return None
    op, ins, rank = node.op, node.inputs, out.rank
    if op == "matmul":
        a, b = ins
        if a.type.rank == 2 and b.type.rank == 1:  # W @ x: row i of y needs row i of W, all x
            return [True, False]
        if a.type.rank < 2 or a.type.rank != rank:  # x @ W with x a vector: columns, not rows
            return None
        return [_same_rows(a, rank, rows), b.type.rank >= 3 and _same_rows(b, rank, rows)]
    if op == "conv2d":
        return [True, False]
    if op in ("sum", "max", "mean"):
        axes = reduced_axes(ins[0].type, node.attrs.get("axes"))
        return None if 0 in axes else [True]
    if op == "softmax":
        return None if node.attrs.get("axis", -1) % rank == 0 else [True]
    if op == "layernorm":
        return None if rank < 2 else [True] + [False] * (len(ins) - 1)
    if op == "transpose":
        perm = node.attrs.get("perm")
        return [True] if (perm is None and rank == 1) or (perm and perm[0] == 0) else None
    if op == "reshape":
        return [True] if _same_rows(ins[0], ins[0].type.rank, rows) else None
    if op == "slice":
        starts, stops = node.attrs["starts"], node.attrs["stops"]
        steps = node.attrs.get("steps") or (1,) * len(starts)
        if starts and not (starts[0] == 0 and stops[0] >= ins[0].shape[0] and steps[0] == 1):
            return None
        return [True]
    if op == "concat":
        return None if node.attrs.get("axis", 0) % rank == 0 else [True] * len(ins)
    if get_op(op).pattern <= Pattern.BROADCAST:  # elementwise, broadcast, where, cast, ...
        return [_same_rows(v, rank, rows) for v in ins]
    return None


def tile_attrs(node: Node, out_type: TensorType) -> Attrs:
    """The node's attributes for computing only ``out_type`` (a block of its rows)."""
    if node.op in ("reshape", "broadcast_to"):
        items = dict(node.attrs)
        items["shape"] = out_type.shape
        return Attrs(items)
    return node.attrs
