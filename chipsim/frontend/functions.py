"""The op functions of the public API. Each works eagerly and while tracing.

They are thin: the meaning of every op lives once, in the op registry (chipsim.ir.ops).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chipsim.frontend.dispatch import apply


def _unary(op: str):
    def fn(x: Any) -> Any:
        return apply(op, (x,), {})

    fn.__name__ = op
    fn.__doc__ = f"Elementwise ``{op}`` of a tensor (see chipsim.ir.ops for its definition)."
    return fn


def _binary(op: str):
    def fn(a: Any, b: Any) -> Any:
        return apply(op, (a, b), {})

    fn.__name__ = op
    fn.__doc__ = f"Elementwise ``{op}`` of two tensors with numpy broadcasting."
    return fn


neg, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, gelu = (
    _unary(n) for n in ("neg", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu")
)
add, sub, mul, div, maximum, minimum, gt, lt, ge, le, eq = (
    _binary(n)
    for n in ("add", "sub", "mul", "div", "maximum", "minimum", "gt", "lt", "ge", "le", "eq")
)


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with numpy's batching and broadcasting rules."""
    return apply("matmul", (a, b), {})


def cast(x: Any, dtype: str) -> Any:
    """Convert to another element type, e.g. ``cast(x, "f16")``."""
    return apply("cast", (x,), {"to": str(dtype)})


def transpose(x: Any, perm: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them if ``perm`` is None)."""
    return apply("transpose", (x,), {"perm": None if perm is None else tuple(perm)})


def reshape(x: Any, shape: Sequence[int]) -> Any:
    """Same elements, new shape (one ``-1`` allowed)."""
    return apply("reshape", (x,), {"shape": tuple(shape)})


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    return apply("broadcast_to", (x,), {"shape": tuple(shape)})


def concat(tensors: Sequence[Any], axis: int = 0) -> Any:
    """Join tensors along ``axis``."""
    return apply("concat", tuple(tensors), {"axis": axis})


def slice(
    x: Any,
    starts: Sequence[int],
    stops: Sequence[int],  # noqa: A001 - op name
    steps: Sequence[int] | None = None,
) -> Any:
    """``x[starts[0]:stops[0]:steps[0], ...]`` on the leading axes."""
    return apply(
        "slice",
        (x,),
        {
            "starts": tuple(starts),
            "stops": tuple(stops),
            "steps": None if steps is None else tuple(steps),
        },
    )


def _axes(axes: Any) -> Any:
    return None if axes is None else ((axes,) if isinstance(axes, int) else tuple(axes))


def sum(x: Any, axes: Any = None, keepdims: bool = False) -> Any:  # noqa: A001 - op name
    return apply("sum", (x,), {"axes": _axes(axes), "keepdims": keepdims})


def max(x: Any, axes: Any = None, keepdims: bool = False) -> Any:  # noqa: A001 - op name
    return apply("max", (x,), {"axes": _axes(axes), "keepdims": keepdims})


def mean(x: Any, axes: Any = None, keepdims: bool = False) -> Any:
    return apply("mean", (x,), {"axes": _axes(axes), "keepdims": keepdims})


def softmax(x: Any, axis: int = -1) -> Any:
    return apply("softmax", (x,), {"axis": axis})


def layernorm(x: Any, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalise the last axis; optionally scale by ``weight`` and shift by ``bias``."""
    if (weight is None) != (bias is None):  # None would otherwise become a scalar constant
        from chipsim.errors import ShapeError

        raise ShapeError("layernorm: give both weight and bias, or neither")
    operands = (x,) if weight is None else (x, weight, bias)
    return apply("layernorm", operands, {"eps": eps})


def conv2d(x: Any, w: Any, stride: Any = 1, padding: Any = "valid") -> Any:
    """2-D convolution, ``x`` in NHWC layout, ``w`` in HWIO layout."""
    stride = tuple(stride) if isinstance(stride, (list, tuple)) else stride
    padding = tuple(padding) if isinstance(padding, (list, tuple)) else padding
    return apply("conv2d", (x, w), {"stride": stride, "padding": padding})
