"""Max pooling over 2-D windows of an NHWC tensor."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32
from chipsim.ir.ops.registry import AttrSpec, Example, OpDef, Pattern, register
from chipsim.ir.types import TensorType


def _window(value: object) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    ):
        raise ValueError("expected an int >= 1 or a pair of them")
    return value  # type: ignore[return-value]


def _padding(value: object) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise ValueError("expected an int >= 0 or a pair of them")
    return value  # type: ignore[return-value]


def _geometry(x: tuple[int, ...], attrs: Attrs) -> tuple[int, int]:
    (kh, kw), (sh, sw), (ph, pw) = (
        attrs["window"],
        attrs["stride"] or attrs["window"],
        attrs["padding"],
    )
    return (x[1] + 2 * ph - kh) // sh + 1, (x[2] + 2 * pw - kw) // sw + 1


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x = ins[0]
    if x.rank != 4 or not x.dtype.is_float:
        raise ShapeError(f"max_pool2d needs a float NHWC tensor (rank 4), got {x}")
    kh, kw = attrs["window"]
    ph, pw = attrs["padding"]
    if 2 * ph > kh or 2 * pw > kw:
        raise ShapeError(f"padding {attrs['padding']} is more than half the window {(kh, kw)}")
    oh, ow = _geometry(x.shape, attrs)
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"the window {(kh, kw)} is larger than the padded input {x}")
    return x.with_shape((x.shape[0], oh, ow, x.shape[3]))


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    (kh, kw), (ph, pw) = attrs["window"], attrs["padding"]
    sh, sw = attrs["stride"] or attrs["window"]
    oh, ow = _geometry(x.shape, attrs)
    xp = np.pad(x, ((0, 0), (ph, ph), (pw, pw), (0, 0)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))
    return win[:, ::sh, ::sw][:, :oh, :ow].max(axis=(4, 5))


register(
    OpDef(
        "max_pool2d",
        Pattern.REDUCTION,  # an output element combines a window of inputs
        (1, 1),
        _infer,
        _compute,
        lambda ins, out, attrs: out.numel * (attrs["window"][0] * attrs["window"][1] - 1),
        attrs={
            "window": AttrSpec(default=(2, 2), check=_window, doc="int or (kh, kw)"),
            "stride": AttrSpec(default=None, check=_window, doc="int or (sh, sw); the window"),
            "padding": AttrSpec(default=(0, 0), check=_padding, doc="int or (ph, pw), -inf pads"),
        },
        doc="max over 2-D windows of an NHWC tensor (padding never wins: it is -inf)",
        rows=lambda ins, out, attrs: (True,),  # images are independent
        # one max per element of a 3 x 3 window (the common case: ResNet's stem)
        vector_slots=9,
        examples=(
            Example((TensorType((2, 12, 12, 8), f32),), {"window": 3, "stride": 2, "padding": 1}),
            Example((TensorType((3, 8, 8, 4), f32),)),
        ),
    )
)
