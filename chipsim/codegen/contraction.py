"""The geometry of a blocked contraction: which kernels qualify, and how operands are sliced.

A kernel qualifies for blocking (see :mod:`chipsim.codegen.blocked`) when its compute nodes
are one contraction (an op with a ``geometry``: matmul, conv2d) followed by an *epilogue*:
elementwise ops whose results have the contraction's output shape (add a bias, relu, gelu, a
residual add...). The contraction's operands must be tensors with a location (inputs or
placed weights), not values made inside the kernel.

Every operand is sliced by an **axis map**: for each of its dimensions, the output axis it
follows (an ``int``), the inner dimension ``"k"``, or ``None`` (always taken whole). For
``C[b, m, n] = A[b, m, k] @ B[b, k, n]`` the maps are ``A: (0, 1, "k")``, ``B: (0, "k", 2)``;
a bias ``f32[n]`` has ``(2,)``. A tile gives each axis a range ``(start, size)``, and an
operand's tile is then a strided view of the full tensor: no data is rearranged.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> a, w = b.input((64, 32), f32), b.input((32, 48), f32)
    >>> c = b.op("matmul", a, w)
    >>> geo = contraction_geometry(b.nodes[-1])
    >>> geo.maps, geo.row_axis, geo.col_axis, geo.k
    (((0, 'k'), ('k', 1)), 0, 1, 32)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chipsim.codegen.kernel import KernelSpec
from chipsim.hw.isa import Operand
from chipsim.ir.graph import Node, Value
from chipsim.ir.ops import Geometry, Pattern, check_attrs, get_op
from chipsim.ir.ops.registry import Axis

Tile = Mapping[int | str, tuple[int, int]]  # axis -> (start, size)


def contraction_geometry(node: Node) -> Geometry | None:
    """The :class:`~chipsim.ir.ops.Geometry` of a contraction node (the op declares it;
    None for a dot product or an op that is not a contraction)."""
    opdef = get_op(node.op)
    if opdef.geometry is None:
        return None
    return opdef.geometry([v.type for v in node.inputs], node.type, check_attrs(opdef, node.attrs))


def broadcast_map(v: Value, out_shape: tuple[int, ...]) -> tuple[Axis, ...]:
    """The axis map of an epilogue input that broadcasts to ``out_shape`` (right-aligned)."""
    first = len(out_shape) - v.type.rank
    return tuple(None if n == 1 else first + i for i, n in enumerate(v.shape))


@dataclass(frozen=True, slots=True)
class BlockedKernel:
    """A kernel in the blocked form: one contraction, then an elementwise epilogue.

    Attributes:
        contraction: the matmul or conv2d node.
        geometry: its tiling geometry.
        epilogue: the elementwise nodes applied to each output tile, in order.
        maps: the axis map of every value the kernel touches (operands, epilogue inputs,
            results).
    """

    contraction: Node
    geometry: Geometry
    epilogue: tuple[Node, ...]
    maps: dict[Value, tuple[Axis, ...]]

    @property
    def results(self) -> list[Value]:
        """The values computed per output tile: the contraction's, then the epilogue's."""
        return [self.contraction.output] + [n.output for n in self.epilogue]


def match_blocked(kernel: KernelSpec) -> BlockedKernel | None:
    """The kernel in blocked form, or None if it is not one contraction plus an epilogue."""
    compute = [n for n in kernel.nodes if not n.is_constant]
    if not compute:
        return None
    head, epilogue = compute[0], compute[1:]
    geometry = contraction_geometry(head)
    if geometry is None or any(v not in kernel.location for v in head.inputs):
        return None
    out_shape = head.type.shape
    maps: dict[Value, tuple[Axis, ...]] = {head.output: tuple(range(len(out_shape)))}
    for v, m in zip(head.inputs, geometry.maps, strict=True):
        maps[v] = m
    for node in epilogue:
        if get_op(node.op).pattern > Pattern.BROADCAST or node.type.shape != out_shape:
            return None
        for v in node.inputs:
            if v in maps and v not in head.inputs:
                continue
            if v in head.inputs or not _broadcasts(v.shape, out_shape):
                return None
            maps[v] = broadcast_map(v, out_shape)
        maps[node.output] = maps[head.output]
    return BlockedKernel(head, geometry, tuple(epilogue), maps)


def _broadcasts(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    if len(shape) > len(out):
        return False
    return all(n in (1, m) for n, m in zip(shape[::-1], out[::-1], strict=False))


# -- slicing ------------------------------------------------------------------------------------
def dense_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides (in elements) of a dense tensor of ``shape``."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def tile_shape(v: Value, axes: tuple[Axis, ...], tile: Tile) -> tuple[int, ...]:
    """The shape of ``v``'s slice for ``tile``."""
    return tuple(n if a is None else tile[a][1] for n, a in zip(v.shape, axes, strict=False))


def tile_key(axes: tuple[Axis, ...], tile: Tile) -> tuple[tuple[int, int], ...]:
    """What identifies ``v``'s slice: two tiles with the same key read the same bytes."""
    return tuple(tile[a] for a in axes if a is not None)


def tile_view(
    v: Value, axes: tuple[Axis, ...], tile: Tile, level: str, offset: int, name: str
) -> Operand:
    """The slice of ``v`` (stored densely at ``level[offset]``) for ``tile``, as a strided view."""
    full = dense_strides(v.shape)
    start = sum(tile[a][0] * s for a, s in zip(axes, full, strict=False) if a is not None)
    shape = tile_shape(v, axes, tile)
    strides = None if _is_dense(shape, full) else full
    return Operand(level, offset + start * v.dtype.itemsize, shape, v.dtype.name, strides, name)


def _is_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    expect = 1
    for n, s in zip(reversed(shape), reversed(strides), strict=False):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def tile_bytes(v: Value, axes: tuple[Axis, ...], tile: Tile) -> int:
    return math.prod(tile_shape(v, axes, tile)) * v.dtype.itemsize
