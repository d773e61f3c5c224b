"""The op registry: one :class:`OpDef` per op, used by every front end, pass and backend.

An op declares its *meaning* (shape/dtype inference and numpy semantics) and its *work*
(FLOPs, bytes read and written). It says nothing about time: cost comes from a chip.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np

from chipsim.errors import IRError, ShapeError
from chipsim.ir.dtypes import to_storage
from chipsim.ir.graph import Attrs
from chipsim.ir.types import TensorType


class Pattern(IntEnum):
    """How an op's output elements depend on its inputs; fusion rules are stated in these.

    The order is the fusion lattice: a group's pattern is the largest of its members'.
    """

    ELEMENTWISE = 0  # out[i] = f(in[i])
    BROADCAST = 1  # out[i] = f(a[bcast(i)], b[bcast(i)])
    INJECTIVE = 2  # each output element comes from one input element (reshape, transpose...)
    REDUCTION = 3  # an output element combines many input elements (sum, softmax...)
    CONTRACTION = 4  # matmul / conv: compute-heavy, can take an elementwise epilogue
    OPAQUE = 5  # never fused

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class AttrSpec:
    """An attribute an op accepts: whether it is required, its default, and a checker.

    ``check`` returns the normalised value or raises ``ValueError`` with a reason.
    """

    required: bool = False
    default: Any = None
    check: Callable[[Any], Any] | None = None
    doc: str = ""


InferFn = Callable[[Sequence[TensorType], Attrs], TensorType]
ComputeFn = Callable[[Sequence[np.ndarray], Attrs], np.ndarray]
FlopsFn = Callable[[Sequence[TensorType], TensorType, Attrs], int]


@dataclass(frozen=True)
class OpDef:
    """Everything chipsim knows about one op."""

    name: str
    pattern: Pattern
    arity: tuple[int, int | None]  # (min, max); max None = any number
    infer: InferFn
    compute: ComputeFn
    flops: FlopsFn
    attrs: dict[str, AttrSpec] = field(default_factory=dict)
    doc: str = ""
    moves_data: bool = True  # False for views (reshape) that need no data movement

    def bytes_read(self, in_types: Sequence[TensorType]) -> int:
        return sum(t.nbytes for t in in_types) if self.moves_data else 0

    def bytes_written(self, out_type: TensorType) -> int:
        return out_type.nbytes if self.moves_data else 0


OPS: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.name in OPS:
        raise IRError(f"op {opdef.name!r} is registered twice")
    OPS[opdef.name] = opdef
    return opdef


def get_op(name: str) -> OpDef:
    """The :class:`OpDef` for ``name``; an unknown name raises a helpful :class:`IRError`."""
    try:
        return OPS[name]
    except KeyError:
        close = [k for k in OPS if k.startswith(name[:3])] if isinstance(name, str) else []
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise IRError(f"unknown op {name!r}.{hint} Known ops: {', '.join(sorted(OPS))}") from None


def check_attrs(opdef: OpDef, attrs: Attrs) -> Attrs:
    """Validate ``attrs`` against the op's specs; return them with defaults filled in."""
    for key in attrs:
        if key not in opdef.attrs:
            allowed = ", ".join(opdef.attrs) or "none"
            raise IRError(f"{opdef.name}: unknown attribute {key!r} (allowed: {allowed})")
    out: dict[str, Any] = {}
    for key, spec in opdef.attrs.items():
        if key not in attrs:
            if spec.required:
                raise IRError(f"{opdef.name}: missing required attribute {key!r} ({spec.doc})")
            out[key] = spec.default
            continue
        value = attrs[key]
        if value is None and spec.default is None and not spec.required:
            out[key] = None  # an explicit None means "use the default"
            continue
        if spec.check is not None:
            try:
                value = spec.check(value)
            except (ValueError, TypeError) as exc:
                raise IRError(f"{opdef.name}: bad attribute {key}={attrs[key]!r}: {exc}") from None
        out[key] = value
    return Attrs(out)


def check_arity(opdef: OpDef, n: int) -> None:
    lo, hi = opdef.arity
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if lo == hi else f"{lo}..{hi if hi is not None else 'any'}"
        raise IRError(f"{opdef.name} takes {want} input(s), got {n}")


def infer_type(op: str, in_types: Sequence[TensorType], attrs: Attrs) -> TensorType:
    """Check arity and attributes, then infer the result type of ``op``."""
    opdef = get_op(op)
    check_arity(opdef, len(in_types))
    full = check_attrs(opdef, attrs)
    try:
        return opdef.infer(in_types, full)
    except ShapeError as exc:
        raise ShapeError(f"{op}: {exc}") from None


def execute(
    op: str, arrays: Sequence[np.ndarray], attrs: Attrs, out_type: TensorType
) -> np.ndarray:
    """Run ``op`` with numpy and return its result in the storage of ``out_type``."""
    opdef = get_op(op)
    full = check_attrs(opdef, attrs)
    with np.errstate(all="ignore"):
        result = np.asarray(opdef.compute(arrays, full))
    result = to_storage(result, out_type.dtype)
    if result.shape != out_type.shape:  # a registry bug, never a user error
        raise IRError(f"{op} produced shape {result.shape}, expected {out_type.shape}")
    return result


def flops(op: str, in_types: Sequence[TensorType], out_type: TensorType, attrs: Attrs) -> int:
    opdef = get_op(op)
    return int(opdef.flops(in_types, out_type, check_attrs(opdef, attrs)))


# -- attribute checkers shared by the op modules -----------------------------------------------
def int_tuple(value: Any) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if not isinstance(value, tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise ValueError("expected a tuple of ints")
    return value


def optional_axes(value: Any) -> tuple[int, ...] | None:
    return None if value is None else int_tuple(value)


def an_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError("expected an int")
    return value


def a_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected True or False")
    return value


def a_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("expected a number")
    return float(value)


def normalize_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for a rank-{rank} tensor")
    return axis % max(rank, 1)
