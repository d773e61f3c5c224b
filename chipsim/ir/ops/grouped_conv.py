"""Grouped 2-D convolution (NHWC input, HWIO weights): depthwise convolution is its limit case.

The input channels are split into ``groups`` equal groups and each group is convolved with its
own ``cout / groups`` filters; with ``groups == cin`` every channel gets its own filters
(depthwise convolution, as in MobileNetV2). As matrix products it is ``groups`` independent
im2col products of ``pixels x (kh * kw * cin / groups) x (cout / groups)``: tiny products,
which is why depthwise layers use a matrix unit so poorly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32
from chipsim.ir.ops.contraction import _padding, _stride, conv_geometry
from chipsim.ir.ops.registry import AttrSpec, Contraction, Example, OpDef, Pattern, register
from chipsim.ir.types import TensorType


def _groups(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError("expected an int >= 1")
    return value


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x, w = ins
    if x.rank != 4 or w.rank != 4:
        raise ShapeError(
            f"grouped_conv2d needs x as NHWC (rank 4) and w as HWIO (rank 4), got {x} and {w}"
        )
    if x.dtype != w.dtype or not x.dtype.is_float:
        raise ShapeError(f"grouped_conv2d needs matching float dtypes, got {x} and {w}")
    g, cin, cout = attrs["groups"], x.shape[3], w.shape[3]
    if cin % g or cout % g:
        raise ShapeError(
            f"groups={g} must divide the input channels ({cin}) and the output channels ({cout})"
        )
    if w.shape[2] != cin // g:
        raise ShapeError(
            f"each of the {g} groups sees {cin // g} input channels, but w has {w.shape[2]} "
            f"(w must be (kh, kw, cin / groups, cout) = (.., .., {cin // g}, {cout}))"
        )
    n, oh, ow, _, _ = conv_geometry(x, w, attrs)
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"the kernel {w.shape[:2]} is larger than the padded input {x}")
    return x.with_shape((n, oh, ow, cout))


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = a
    kh, kw, cg, cout = w.shape
    g = attrs["groups"]
    sh, sw = attrs["stride"]
    n, oh, ow, _, (pt, pb, pl, pr) = conv_geometry(
        TensorType(x.shape, "f32"), TensorType(w.shape, "f32"), attrs
    )
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))
    win = win[:, ::sh, ::sw][:, :oh, :ow]  # n, oh, ow, cin, kh, kw
    win = win.reshape(n, oh, ow, g, cg, kh, kw)
    wg = w.reshape(kh, kw, cg, g, cout // g)  # output channel o = group * (cout/g) + j
    out = np.einsum("nhwgcij,ijcgo->nhwgo", win, wg, optimize=True)
    return out.reshape(n, oh, ow, cout)


def _contraction(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> Contraction:
    kh, kw, cg, cout = ins[1].shape
    g = attrs["groups"]
    return Contraction(g, out.numel // max(cout, 1), kh * kw * cg, cout // g)


def _flops(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> int:
    kh, kw, cg, _ = ins[1].shape
    return 2 * out.numel * kh * kw * cg


register(
    OpDef(
        "grouped_conv2d",
        Pattern.CONTRACTION,
        (2, 2),
        _infer,
        _compute,
        _flops,
        attrs={
            "stride": AttrSpec(default=(1, 1), check=_stride, doc="int or (sh, sw)"),
            "padding": AttrSpec(
                default="valid", check=_padding, doc="'valid', 'same', an int or (ph, pw)"
            ),
            "groups": AttrSpec(default=1, check=_groups, doc="channel groups (cin for depthwise)"),
        },
        doc="grouped 2-D convolution: x NHWC, w (kh, kw, in/groups, out); groups=in is depthwise",
        inputs=("x", "w"),
        rows=lambda ins, out, attrs: (True, False),  # a block of images needs every filter
        contraction=_contraction,
        # no blocked geometry: a group couples input and output channels, so the blocked
        # kernel's independent channel tiles do not apply; its weights are small anyway
        examples=(
            Example(
                (TensorType((2, 9, 9, 8), f32), TensorType((3, 3, 1, 8), f32)),
                {"groups": 8, "padding": "same"},
            ),
            Example(
                (TensorType((3, 10, 10, 8), f32), TensorType((3, 3, 2, 12), f32)),
                {"groups": 4, "stride": 2, "padding": 1},
            ),
        ),
    )
)
