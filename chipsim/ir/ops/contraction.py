"""Contractions: batched matmul and 2-D convolution (NHWC input, HWIO weights)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.i18n import N_, tr
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32, i32
from chipsim.ir.ops.elementwise import broadcast_shapes
from chipsim.ir.ops.registry import (
    AttrSpec,
    Axis,
    Contraction,
    Example,
    Geometry,
    OpDef,
    Pattern,
    register,
)
from chipsim.ir.types import TensorType


def matmul_dims(a: TensorType, b: TensorType) -> tuple[tuple[int, ...], int, int, int]:
    """(batch shape, M, K, N) of ``a @ b`` under numpy's matmul rules."""
    if a.rank == 0 or b.rank == 0:
        raise ShapeError(f"matmul needs tensors of rank >= 1, got {a} and {b}")
    a_shape = (1,) + a.shape if a.rank == 1 else a.shape
    b_shape = b.shape + (1,) if b.rank == 1 else b.shape
    m, k = a_shape[-2:]
    k2, n = b_shape[-2:]
    if k != k2:
        message = (
            N_("inner dimensions differ: {a} @ {b} needs {a} last dim ({k}) == {b} only dim ({k2})")
            if b.rank == 1
            else N_(
                "inner dimensions differ: {a} @ {b} needs {a} last dim ({k}) == "
                "{b} second-to-last dim ({k2})"
            )
        )
        raise ShapeError(tr(message, a=a, b=b, k=k, k2=k2))
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return batch, m, k, n


def _infer_matmul(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    a, b = ins
    if a.dtype != b.dtype:
        raise ShapeError(f"dtype mismatch ({a} vs {b}); insert a cast so they agree")
    if a.dtype.kind == "bool":
        raise ShapeError(f"matmul of bool tensors is not defined ({a}); cast to f32")
    batch, m, _, n = matmul_dims(a, b)
    shape = batch + ((m,) if a.rank > 1 else ()) + ((n,) if b.rank > 1 else ())
    return a.with_shape(shape)


def _matmul_flops(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> int:
    batch, m, k, n = matmul_dims(*ins)
    return 2 * math.prod(batch) * m * k * n


def _matmul_rows(ins: Sequence[TensorType], out: TensorType, attrs: Attrs):
    a, b = ins
    if a.rank == 2 and b.rank == 1:  # W @ x: row i of y needs row i of W, all of x
        return (True, False)
    if a.rank < 2 or a.rank != out.rank:  # x @ W with x a vector: columns, not rows
        return None
    rows = out.shape[0]  # b follows the rows only through a batch axis (b's axis 0 is K if 2-D)
    return (a.shape[0] == rows, b.rank >= 3 and b.rank == out.rank and b.shape[0] == rows)


def _matmul_contraction(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> Contraction:
    batch, m, k, n = matmul_dims(*ins)
    return Contraction(math.prod(batch), m, k, n)


def _batch_map(shape: tuple[int, ...], nbatch: int) -> list[Axis]:
    """Batch dims, right-aligned with the output's ``nbatch`` batch axes; size 1 broadcasts."""
    first = nbatch - len(shape)
    return [None if n == 1 else first + i for i, n in enumerate(shape)]


def _matmul_geometry(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> Geometry | None:
    a, b = (t.shape for t in ins)
    if len(a) == 1 and len(b) == 1:
        return None  # a dot product: nothing to tile
    nbatch = out.rank - (len(a) > 1) - (len(b) > 1)
    row = nbatch if len(a) > 1 else None
    col = out.rank - 1 if len(b) > 1 else None
    map_a: list[Axis] = ["k"]
    if len(a) > 1:
        map_a = _batch_map(a[:-2], nbatch) + [row, "k"]
    map_b: list[Axis] = ["k"]
    if len(b) > 1:
        map_b = _batch_map(b[:-2], nbatch) + ["k", col]
    return Geometry((tuple(map_a), tuple(map_b)), row, col, tuple(range(nbatch)), a[-1])


register(
    OpDef(
        "matmul",
        Pattern.CONTRACTION,
        (2, 2),
        _infer_matmul,
        lambda a, attrs: np.matmul(a[0], a[1]),
        _matmul_flops,
        doc="a @ b with numpy's batching and broadcasting rules",
        inputs=("a", "b"),
        rows=_matmul_rows,
        contraction=_matmul_contraction,
        geometry=_matmul_geometry,
        examples=(
            Example((TensorType((64, 48), f32), TensorType((48, 32), f32))),
            Example((TensorType((48, 64), f32), TensorType((64,), f32))),
            Example((TensorType((4, 16, 24), f32), TensorType((4, 24, 16), f32))),
            Example((TensorType((24,), f32), TensorType((24, 16), f32))),
            Example((TensorType((32, 24), i32), TensorType((24, 16), i32))),
        ),
    )
)


def _pair(value: object) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return (value, value)
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        return value  # type: ignore[return-value]
    raise ValueError("expected an int >= 0 or a pair of them")


def _stride(value: object) -> tuple[int, int]:
    pair = _pair(value)
    if 0 in pair:
        raise ValueError("stride must be at least 1")
    return pair


def _padding(value: object) -> str | tuple[int, int]:
    if value in ("same", "valid"):
        return value  # type: ignore[return-value]
    return _pair(value)


def conv_geometry(x: TensorType, w: TensorType, attrs: Attrs):
    """Output size and explicit padding (top, left) of a conv2d."""
    n, h, wd, c = x.shape
    kh, kw, cin, cout = w.shape
    sh, sw = attrs["stride"]
    pad = attrs["padding"]
    if pad == "valid":
        ph = pw = 0
        pads = (0, 0, 0, 0)
    elif pad == "same":
        oh, ow = -(-h // sh), -(-wd // sw)
        th = max((oh - 1) * sh + kh - h, 0)
        tw = max((ow - 1) * sw + kw - wd, 0)
        pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
    else:
        ph, pw = pad
        pads = (ph, ph, pw, pw)
    oh = (h + pads[0] + pads[1] - kh) // sh + 1
    ow = (wd + pads[2] + pads[3] - kw) // sw + 1
    return n, oh, ow, cout, pads


def _infer_conv(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x, w = ins
    if x.rank != 4 or w.rank != 4:
        raise ShapeError(f"conv2d needs x as NHWC (rank 4) and w as HWIO (rank 4), got {x} and {w}")
    if x.dtype != w.dtype or not x.dtype.is_float:
        raise ShapeError(f"conv2d needs matching float dtypes, got {x} and {w}")
    if x.shape[3] != w.shape[2]:
        raise ShapeError(f"input channels differ: x has {x.shape[3]}, w expects {w.shape[2]}")
    n, oh, ow, cout, _ = conv_geometry(x, w, attrs)
    if oh <= 0 or ow <= 0:
        raise ShapeError(f"the kernel {w.shape[:2]} is larger than the padded input {x}")
    return x.with_shape((n, oh, ow, cout))


def _conv(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = a
    kh, kw, cin, cout = w.shape
    sh, sw = attrs["stride"]
    n, oh, ow, _, (pt, pb, pl, pr) = conv_geometry(
        TensorType(x.shape, "f32"), TensorType(w.shape, "f32"), attrs
    )
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))
    win = win[:, ::sh, ::sw][:, :oh, :ow]  # n, oh, ow, cin, kh, kw
    return np.einsum("nhwcij,ijco->nhwo", win, w, optimize=True)


def _conv_flops(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> int:
    kh, kw, cin, _ = ins[1].shape
    return 2 * out.numel * kh * kw * cin


def _conv_contraction(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> Contraction:
    """A conv as one matrix product (im2col): output pixels x (kh * kw * cin) x cout."""
    kh, kw, cin, cout = ins[1].shape
    return Contraction(1, out.numel // max(cout, 1), kh * kw * cin, cout)


def _conv_geometry(ins: Sequence[TensorType], out: TensorType, attrs: Attrs) -> Geometry:
    """Tiles over images (rows), output channels (columns) and input channels (inner): a
    conv is a sum over input channels, so partial sums add up."""
    return Geometry(((0, None, None, "k"), (None, None, "k", 3)), 0, 3, (), ins[1].shape[2], 1)


register(
    OpDef(
        "conv2d",
        Pattern.CONTRACTION,
        (2, 2),
        _infer_conv,
        _conv,
        _conv_flops,
        attrs={
            "stride": AttrSpec(default=(1, 1), check=_stride, doc="int or (sh, sw)"),
            "padding": AttrSpec(
                default="valid", check=_padding, doc="'valid', 'same', an int or (ph, pw)"
            ),
        },
        doc="2-D convolution: x NHWC, w HWIO (kh, kw, in, out)",
        inputs=("x", "w"),
        rows=lambda ins, out, attrs: (True, False),  # a block of images needs every filter
        contraction=_conv_contraction,
        geometry=_conv_geometry,
        examples=(
            Example((TensorType((2, 10, 10, 3), f32), TensorType((3, 3, 3, 8), f32))),
            Example(
                (TensorType((2, 9, 9, 4), f32), TensorType((3, 3, 4, 8), f32)),
                {"stride": 2, "padding": "same"},
            ),
        ),
    )
)
