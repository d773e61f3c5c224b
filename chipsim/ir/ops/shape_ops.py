"""Injective ops: they move elements without computing (transpose, reshape, slice...)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32
from chipsim.ir.ops.elementwise import broadcast_shapes
from chipsim.ir.ops.registry import (
    AttrSpec,
    Example,
    OpDef,
    Pattern,
    an_int,
    int_tuple,
    no_flops,
    normalize_axis,
    register,
)
from chipsim.ir.types import TensorType


def _with_shape(attrs: Attrs, out: TensorType) -> Attrs:
    """For ops whose ``shape`` attribute is the output's shape: a block of rows has its own."""
    return Attrs({**attrs, "shape": out.shape})


def _perm(ins: Sequence[TensorType], attrs: Attrs) -> tuple[int, ...]:
    rank = ins[0].rank
    perm = attrs["perm"]
    if perm is None:
        return tuple(reversed(range(rank)))
    if sorted(perm) != list(range(rank)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {rank} axes of {ins[0]}")
    return perm


register(
    OpDef(
        "transpose",
        Pattern.INJECTIVE,
        (1, 1),
        lambda ins, attrs: ins[0].with_shape(tuple(ins[0].shape[p] for p in _perm(ins, attrs))),
        lambda a, attrs: np.transpose(a[0], attrs["perm"]),
        no_flops,
        attrs={"perm": AttrSpec(default=None, check=int_tuple, doc="new order of axes")},
        doc="permute axes (reverses them when perm is omitted)",
        rows=lambda ins, out, attrs: (True,) if _perm(ins, attrs)[0] == 0 else None,
        examples=(
            Example((TensorType((64, 48), f32),)),
            Example((TensorType((16, 8, 12), f32),), {"perm": (0, 2, 1)}),
        ),
    )
)


def _infer_reshape(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    shape = list(attrs["shape"])
    src = ins[0]
    if shape.count(-1) > 1:
        raise ShapeError(f"at most one -1 allowed in shape {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or src.numel % known:
            raise ShapeError(f"cannot infer -1 in {shape} for {src} ({src.numel} elements)")
        shape[shape.index(-1)] = src.numel // known
    if any(d < 0 for d in shape) or math.prod(shape) != src.numel:
        raise ShapeError(f"cannot reshape {src} ({src.numel} elements) to {shape}")
    return src.with_shape(tuple(shape))


register(
    OpDef(
        "reshape",
        Pattern.INJECTIVE,
        (1, 1),
        _infer_reshape,
        lambda a, attrs: np.reshape(a[0], attrs["shape"]),
        no_flops,
        attrs={"shape": AttrSpec(required=True, check=int_tuple, doc="new shape, one -1 allowed")},
        doc="same elements, new shape (a view: moves no data)",
        moves_data=False,
        # row i of the result is row i of the input exactly when both have the same rows
        rows=lambda ins, out, attrs: (
            (True,) if ins[0].rank and ins[0].shape[0] == out.shape[0] else None
        ),
        retile=_with_shape,
        examples=(
            Example((TensorType((64, 48), f32),), {"shape": (64, 6, 8)}),
            Example((TensorType((64, 48), f32),), {"shape": (-1,)}),
        ),
    )
)


def _infer_broadcast_to(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    target = attrs["shape"]
    try:
        ok = broadcast_shapes(ins[0].shape, target) == tuple(target)
    except ShapeError:
        ok = False
    if not ok:
        raise ShapeError(
            f"cannot broadcast {ins[0]} to {list(target)}: each dimension must "
            "match the target or be 1, counting from the right"
        )
    return ins[0].with_shape(target)


register(
    OpDef(
        "broadcast_to",
        Pattern.BROADCAST,
        (1, 1),
        _infer_broadcast_to,
        lambda a, attrs: np.broadcast_to(a[0], attrs["shape"]).copy(),
        no_flops,
        attrs={"shape": AttrSpec(required=True, check=int_tuple, doc="target shape")},
        doc="repeat along size-1 or missing leading axes",
        retile=_with_shape,
        examples=(
            Example((TensorType((1, 48), f32),), {"shape": (64, 48)}),
            Example((TensorType((64, 1), f32),), {"shape": (64, 48)}),
        ),
    )
)


def _infer_concat(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    first = ins[0]
    axis = normalize_axis(attrs["axis"], first.rank)
    for t in ins[1:]:
        if t.dtype != first.dtype:
            raise ShapeError(f"dtype mismatch ({first} vs {t}); insert a cast so they agree")
        same = t.rank == first.rank and all(
            a == b for i, (a, b) in enumerate(zip(t.shape, first.shape, strict=False)) if i != axis
        )
        if not same:
            raise ShapeError(f"{t} does not match {first} except along axis {axis}")
    size = sum(t.shape[axis] for t in ins)
    return first.with_shape(first.shape[:axis] + (size,) + first.shape[axis + 1 :])


register(
    OpDef(
        "concat",
        Pattern.INJECTIVE,
        (1, None),
        _infer_concat,
        lambda a, attrs: np.concatenate(a, axis=attrs["axis"]),
        no_flops,
        attrs={"axis": AttrSpec(default=0, check=an_int, doc="axis to join along")},
        doc="join tensors along an axis",
        inputs=("tensors",),
        variadic=True,
        rows=lambda ins, out, attrs: None if attrs["axis"] % out.rank == 0 else (True,) * len(ins),
        examples=(
            Example((TensorType((64, 16), f32), TensorType((64, 32), f32)), {"axis": 1}),
            Example((TensorType((16, 48), f32), TensorType((32, 48), f32))),
        ),
    )
)


def _slices(t: TensorType, attrs: Attrs) -> tuple[slice, ...]:
    starts, stops = attrs["starts"], attrs["stops"]
    steps = attrs["steps"] or (1,) * len(starts)
    if not (len(starts) == len(stops) == len(steps)) or len(starts) > t.rank:
        raise ShapeError(f"starts/stops/steps must have the same length, at most the rank of {t}")
    if any(s <= 0 for s in steps):
        raise ShapeError(f"steps must be positive, got {list(steps)}")
    return tuple(slice(a, b, c) for a, b, c in zip(starts, stops, steps, strict=True))


def _slice_rows(ins: Sequence[TensorType], out: TensorType, attrs: Attrs):
    """Row-wise when axis 0 is kept whole (sliced from 0 to the end, step 1)."""
    starts, stops = attrs["starts"], attrs["stops"]
    steps = attrs["steps"] or (1,) * len(starts)
    whole = not starts or (starts[0] == 0 and stops[0] >= ins[0].shape[0] and steps[0] == 1)
    return (True,) if whole else None


def _infer_slice(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    t = ins[0]
    shape = list(t.shape)
    for i, s in enumerate(_slices(t, attrs)):
        shape[i] = len(range(*s.indices(t.shape[i])))
    return t.with_shape(tuple(shape))


register(
    OpDef(
        "slice",
        Pattern.INJECTIVE,
        (1, 1),
        _infer_slice,
        lambda a, attrs: a[0][_slices(TensorType(a[0].shape, "f32"), attrs)].copy(),
        no_flops,
        attrs={
            "starts": AttrSpec(required=True, check=int_tuple, doc="first index per axis"),
            "stops": AttrSpec(required=True, check=int_tuple, doc="end index (exclusive) per axis"),
            "steps": AttrSpec(default=None, check=int_tuple, doc="stride per axis (default 1)"),
        },
        doc="a rectangular window of a tensor (numpy basic slicing on the leading axes)",
        rows=_slice_rows,
        examples=(
            Example((TensorType((64, 48), f32),), {"starts": (0, 8), "stops": (64, 40)}),
            Example((TensorType((64, 48), f32),), {"starts": (4,), "stops": (60,), "steps": (2,)}),
        ),
    )
)
