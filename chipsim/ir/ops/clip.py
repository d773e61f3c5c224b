"""Clip to an interval: ReLU6 is ``clip(x, 0, 6)`` (MobileNetV2)."""

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
    a_float,
    per_element,
    register,
)
from chipsim.ir.types import TensorType


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    if not ins[0].dtype.is_float:
        raise ShapeError(f"clip needs a floating-point input, got {ins[0]}; cast it to f32")
    if attrs["lo"] > attrs["hi"]:
        raise ShapeError(f"clip: lo={attrs['lo']} is above hi={attrs['hi']}")
    return ins[0]


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    return np.clip(x, np.asarray(attrs["lo"], x.dtype), np.asarray(attrs["hi"], x.dtype))


register(
    OpDef(
        "clip",
        Pattern.ELEMENTWISE,
        (1, 1),
        _infer,
        _compute,
        per_element(2),
        attrs={
            "lo": AttrSpec(default=0.0, check=a_float, doc="lower bound"),
            "hi": AttrSpec(default=6.0, check=a_float, doc="upper bound"),
        },
        doc="min(max(x, lo), hi); the defaults make it ReLU6",
        vector_slots=2,
        examples=(
            Example((TensorType((64, 48), f32),)),
            Example((TensorType((64, 48), f32),), {"lo": -0.5, "hi": 0.5}),
        ),
    )
)
