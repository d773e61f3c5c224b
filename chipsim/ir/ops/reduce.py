"""Reductions over axes, and the normalisations built on them (softmax, layernorm)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32
from chipsim.ir.ops.registry import (
    AttrSpec,
    Example,
    OpDef,
    Pattern,
    Reduction,
    a_bool,
    a_float,
    an_int,
    normalize_axis,
    optional_axes,
    register,
)
from chipsim.ir.types import TensorType


def reduced_axes(t: TensorType, axes: tuple[int, ...] | None) -> tuple[int, ...]:
    """The normalised, sorted axes a reduction runs over (all axes when ``axes`` is None)."""
    if axes is None:
        return tuple(range(t.rank))
    norm = [normalize_axis(a, t.rank) for a in axes]
    if len(set(norm)) != len(norm):
        raise ShapeError(f"axes {list(axes)} name the same axis twice")
    return tuple(sorted(norm))


def _infer_reduce(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    t = ins[0]
    axes = reduced_axes(t, attrs["axes"])
    if attrs["keepdims"]:
        shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
    else:
        shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
    return t.with_shape(shape)


def _reduce_rows(ins: Sequence[TensorType], out: TensorType, attrs: Attrs):
    """Row-wise unless axis 0 (of the *input*) is reduced."""
    return None if 0 in reduced_axes(ins[0], attrs["axes"]) else (True,)


def _reduction(name: str, fn, extra_flops: int, doc: str) -> None:
    def compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
        axes = reduced_axes(TensorType(a[0].shape, "f32"), attrs["axes"])
        return fn(a[0], axis=axes, keepdims=attrs["keepdims"])

    register(
        OpDef(
            name,
            Pattern.REDUCTION,
            (1, 1),
            _infer_reduce,
            compute,
            lambda ins, out, attrs: ins[0].numel + extra_flops * out.numel,
            attrs={
                "axes": AttrSpec(
                    default=None, check=optional_axes, doc="axes to reduce (all if None)"
                ),
                "keepdims": AttrSpec(
                    default=False, check=a_bool, doc="keep reduced axes as size 1"
                ),
            },
            doc=doc,
            rows=_reduce_rows,
            reduction=lambda ins, out, attrs: Reduction(max(out.numel, 1)),
            examples=(
                Example((TensorType((64, 48), f32),), {"axes": (-1,)}),
                Example((TensorType((64, 48), f32),), {"axes": (1,), "keepdims": True}),
                Example((TensorType((8, 6, 16), f32),), {"axes": (0,)}),
                Example((TensorType((64, 48), f32),), {}),
            ),
        )
    )


_reduction("sum", np.sum, 0, "sum over axes")
_reduction("max", np.max, 0, "maximum over axes")
_reduction("mean", np.mean, 1, "mean over axes")


def _float_same(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    for t in ins:
        if not t.dtype.is_float:
            raise ShapeError(f"needs floating-point inputs, got {t}; cast it to f32 first")
    normalize_axis(attrs["axis"], ins[0].rank)
    return ins[0]


def _softmax(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    e = np.exp(x - np.max(x, axis=attrs["axis"], keepdims=True))
    return e / np.sum(e, axis=attrs["axis"], keepdims=True)


def _along_axis(out: TensorType, axis: int, passes: int) -> Reduction:
    """One reduction per slice along ``axis``."""
    return Reduction(max(out.numel // max(out.shape[axis], 1), 1), passes)


register(
    OpDef(
        "softmax",
        Pattern.REDUCTION,
        (1, 1),
        _float_same,
        _softmax,
        lambda ins, out, attrs: 5 * out.numel,
        attrs={"axis": AttrSpec(default=-1, check=an_int, doc="axis to normalise over")},
        doc="exp(x - max) / sum(exp(x - max)) along an axis (numerically stable)",
        vector_slots=8,
        rows=lambda ins, out, attrs: None if attrs["axis"] % out.rank == 0 else (True,),
        reduction=lambda ins, out, attrs: _along_axis(out, attrs["axis"], passes=2),
        examples=(
            Example((TensorType((64, 48), f32),)),
            Example((TensorType((64, 48), f32),), {"axis": 0}),
        ),
    )
)


def _last_axis(axis: int) -> int:
    if axis != -1:
        raise ValueError("the op normalises the last axis only; use axis=-1")
    return axis


def _affine_params(x: TensorType, params: Sequence[TensorType], roles: Sequence[str]) -> None:
    """Check per-feature parameters (a weight, a bias): each ``x.dtype[last dim]``."""
    last = (x.shape[-1],) if x.rank else ()
    for t, role in zip(params, roles, strict=False):
        if t.shape != last or t.dtype != x.dtype:
            want = f"{x.dtype}[{last[0] if last else ''}]"
            raise ShapeError(f"{role} must be {want}, got {t}")


def _infer_layernorm(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x = _float_same(ins, attrs)
    if len(ins) == 2:
        raise ShapeError("give both weight and bias, or neither")
    _affine_params(x, ins[1:], ("layernorm weight", "layernorm bias"))
    return x


def _layernorm(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + np.asarray(attrs["eps"], x.dtype))
    if len(a) == 3:
        y = y * a[1] + a[2]
    return y


def _last_axis_rows(ins: Sequence[TensorType], out: TensorType, attrs: Attrs):
    """Normalising the last axis is row-wise unless that axis is the only one; the
    per-feature parameters are needed whole by every row."""
    return None if out.rank < 2 else (True,) + (False,) * (len(ins) - 1)


register(
    OpDef(
        "layernorm",
        Pattern.REDUCTION,
        (1, 3),
        _infer_layernorm,
        _layernorm,
        lambda ins, out, attrs: 8 * out.numel,
        attrs={
            "axis": AttrSpec(default=-1, check=lambda v: _last_axis(an_int(v)), doc="must be -1"),
            "eps": AttrSpec(default=1e-5, check=a_float, doc="added to the variance"),
        },
        doc="normalise the last axis to mean 0, variance 1, then scale and shift",
        inputs=("x", "weight", "bias"),
        vector_slots=8,
        rows=_last_axis_rows,
        reduction=lambda ins, out, attrs: _along_axis(out, -1, passes=2),
        examples=(
            Example((TensorType((64, 48), f32),)),
            Example((TensorType((64, 48), f32), TensorType((48,), f32), TensorType((48,), f32))),
        ),
    )
)


def _infer_rmsnorm(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x = _float_same(ins, attrs)
    _affine_params(x, ins[1:], ("rmsnorm weight",))
    return x


def _rmsnorm(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    mean_square = np.mean(x * x, axis=-1, keepdims=True)
    y = x / np.sqrt(mean_square + np.asarray(attrs["eps"], x.dtype))
    return y * a[1] if len(a) == 2 else y


register(
    OpDef(
        "rmsnorm",
        Pattern.REDUCTION,
        (1, 2),
        _infer_rmsnorm,
        _rmsnorm,
        lambda ins, out, attrs: 4 * out.numel,
        attrs={
            "axis": AttrSpec(default=-1, check=lambda v: _last_axis(an_int(v)), doc="must be -1"),
            "eps": AttrSpec(default=1e-6, check=a_float, doc="added to the mean square"),
        },
        doc="scale the last axis to root-mean-square 1, then by a weight (LLaMA's norm)",
        inputs=("x", "weight"),
        vector_slots=4,
        rows=_last_axis_rows,
        reduction=lambda ins, out, attrs: _along_axis(out, -1, passes=1),
        examples=(
            Example((TensorType((64, 48), f32),)),
            Example((TensorType((64, 48), f32), TensorType((48,), f32))),
        ),
    )
)
