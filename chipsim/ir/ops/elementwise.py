"""Elementwise and broadcasting ops: arithmetic, activations, comparisons, where, cast."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.i18n import tr
from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.dtypes import boolean, dtype, f32
from chipsim.ir.ops.registry import (
    AttrSpec,
    Example,
    OpDef,
    Pattern,
    no_flops,
    per_element,
    register,
)
from chipsim.ir.types import TensorType


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Numpy broadcasting of shapes, with an error that shows both shapes."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        dims.discard(1)
        if len(dims) > 1:
            joiner = tr(" and ")
            shown = joiner.join(str(list(s)) for s in shapes)
            axis = i - rank  # numpy matches dimensions from the right: -1 is the last
            sizes = joiner.join(str(s[axis]) for s in shapes if len(s) >= -axis)
            which = tr("the last") if axis == -1 else tr("{n} from the right", n=-axis)
            raise ShapeError(
                tr(
                    "shapes {shown} cannot be broadcast together: their dimension {axis} "
                    "({which}) is {sizes}. Dimensions are matched from the right and must be "
                    "equal or 1; reshape one operand or use broadcast_to",
                    shown=shown,
                    axis=axis,
                    which=which,
                    sizes=sizes,
                )
            )
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _same_dtype(types: Sequence[TensorType]) -> None:
    names = {t.dtype.name for t in types}
    if len(names) > 1:
        shown = ", ".join(str(t) for t in types)
        raise ShapeError(
            tr(
                "dtype mismatch between operands ({shown}); insert a cast so they agree",
                shown=shown,
            )
        )


def _need_float(types: Sequence[TensorType], what: str) -> None:
    for t in types:
        if not t.dtype.is_float:
            raise ShapeError(f"{what} needs floating-point inputs, got {t}; cast it to f32 first")


def _no_bool(types: Sequence[TensorType], what: str) -> None:
    # numpy refuses `-` on bools; say so at inference time, not deep inside execution
    for t in types:
        if t.dtype is boolean:
            raise ShapeError(
                f"{what} is not defined for bool tensors ({t}); cast to i32 or f32 "
                "first, or use where(...) for logic"
            )


def _unary(
    name: str,
    fn: Callable[[np.ndarray], np.ndarray],
    flops: int,
    float_only: bool,
    doc: str,
    slots: int = 1,
) -> None:
    def infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
        if float_only:
            _need_float(ins, name)
        if name == "neg":
            _no_bool(ins, name)
        return ins[0]

    register(
        OpDef(
            name,
            Pattern.ELEMENTWISE,
            (1, 1),
            infer,
            lambda a, attrs: fn(a[0]),
            per_element(flops),
            doc=doc,
            vector_slots=slots,
            examples=(Example((TensorType((64, 48), f32),), low=0.1 if float_only else None),),
        )
    )


def _binary(
    name: str,
    fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    flops: int,
    result_bool: bool,
    doc: str,
    float_only: bool = False,
    slots: int = 1,
) -> None:
    def infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
        _same_dtype(ins)
        if float_only:
            _need_float(ins, name)
        if name == "sub":
            _no_bool(ins, name)
        shape = broadcast_shapes(ins[0].shape, ins[1].shape)
        return TensorType(shape, boolean if result_bool else ins[0].dtype)

    register(
        OpDef(
            name,
            Pattern.BROADCAST,
            (2, 2),
            infer,
            lambda a, attrs: fn(a[0], a[1]),
            per_element(flops),
            doc=doc,
            inputs=("a", "b"),
            vector_slots=slots,
            examples=(
                Example((TensorType((64, 48), f32), TensorType((64, 48), f32)), low=0.5),
                Example((TensorType((64, 48), f32), TensorType((48,), f32)), low=0.5),
                Example((TensorType((64, 48), f32), TensorType((64, 1), f32)), low=0.5),
            ),
        )
    )


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: np.ndarray) -> np.ndarray:
    # tanh approximation, as in GPT-2. x * x * x, not x**3: numpy computes a power through
    # its general pow routine, about twenty times slower than two multiplications.
    c = np.asarray(np.sqrt(2.0 / np.pi), dtype=x.dtype)
    return 0.5 * x * (1.0 + np.tanh(c * (x + np.asarray(0.044715, x.dtype) * (x * x * x))))


# name, numpy function, FLOPs per element, float inputs only, doc, SIMD slots per element
# (cheap arithmetic takes one slot; transcendental functions run as short polynomial
# sequences, several slots, as on real vector units)
_UNARY = [
    ("neg", np.negative, 1, False, "-x", 1),
    ("exp", np.exp, 1, True, "e ** x", 4),
    ("log", np.log, 1, True, "natural logarithm", 4),
    ("sqrt", np.sqrt, 1, True, "square root", 4),
    ("rsqrt", lambda x: 1.0 / np.sqrt(x), 2, True, "1 / sqrt(x)", 4),
    ("tanh", np.tanh, 1, True, "hyperbolic tangent", 6),
    ("sigmoid", _sigmoid, 4, True, "1 / (1 + exp(-x))", 6),
    ("relu", lambda x: np.maximum(x, np.zeros((), x.dtype)), 1, False, "max(x, 0)", 1),
    ("gelu", _gelu, 8, True, "GELU, tanh approximation", 8),
    ("silu", lambda x: x * _sigmoid(x), 5, True, "x * sigmoid(x) (SiLU or swish, as in LLaMA)", 7),
]
_BINARY = [
    ("add", np.add, 1, False, "a + b"),
    ("sub", np.subtract, 1, False, "a - b"),
    ("mul", np.multiply, 1, False, "a * b"),
    ("maximum", np.maximum, 1, False, "elementwise max"),
    ("minimum", np.minimum, 1, False, "elementwise min"),
    ("gt", np.greater, 1, True, "a > b"),
    ("lt", np.less, 1, True, "a < b"),
    ("ge", np.greater_equal, 1, True, "a >= b"),
    ("le", np.less_equal, 1, True, "a <= b"),
    ("eq", np.equal, 1, True, "a == b"),
]
for _args in _UNARY:
    _unary(*_args)
for _args in _BINARY:
    _binary(*_args)
_binary("div", np.divide, 1, False, "a / b (floating point only)", float_only=True, slots=4)


def _infer_where(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    cond, a, b = ins
    if cond.dtype is not boolean:
        raise ShapeError(f"the condition must be bool, got {cond}; compare first (e.g. x > 0)")
    _same_dtype([a, b])
    return TensorType(broadcast_shapes(cond.shape, a.shape, b.shape), a.dtype)


register(
    OpDef(
        "where",
        Pattern.BROADCAST,
        (3, 3),
        _infer_where,
        lambda a, attrs: np.where(a[0], a[1], a[2]),
        per_element(1),
        doc="where(condition, a, b): a where the condition is true, else b (elementwise, "
        "with broadcasting); a static graph's way to choose between values",
        inputs=("condition", "a", "b"),
        examples=(
            Example(
                (TensorType((64, 48), boolean), TensorType((64, 48), f32), TensorType((), f32))
            ),
        ),
    )
)


def _check_dtype(value: object) -> str:
    return dtype(value).name  # raises IRError with the list of dtypes


register(
    OpDef(
        "cast",
        Pattern.ELEMENTWISE,
        (1, 1),
        lambda ins, attrs: ins[0].with_dtype(attrs["to"]),
        lambda a, attrs: a[0].astype(dtype(attrs["to"]).numpy),
        per_element(1),
        attrs={
            "to": AttrSpec(required=True, check=_check_dtype, doc="target dtype name, e.g. 'f16'")
        },
        doc="convert to another element type, e.g. cast(x, 'f16')",
        examples=(Example((TensorType((64, 48), f32),), {"to": "f16"}),),
    )
)


def _check_const(value: object) -> ConstData:
    if not isinstance(value, ConstData):
        raise ValueError("expected constant data (build it with GraphBuilder.const)")
    return value


register(
    OpDef(
        "constant",
        Pattern.OPAQUE,
        (0, 0),
        lambda ins, attrs: TensorType(attrs["value"].shape, attrs["value"].dtype),
        lambda a, attrs: attrs["value"].array(),
        no_flops,
        attrs={"value": AttrSpec(required=True, check=_check_const, doc="the constant's data")},
        doc="a tensor known when the graph is built (weights, literals)",
        inputs=(),
        moves_data=False,
        public=False,
        is_constant=True,
    )
)
