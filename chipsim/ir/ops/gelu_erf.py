"""GELU with the exact error function, as in BERT (GPT-2 uses the tanh form, ``gelu``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32
from chipsim.ir.ops.registry import Example, OpDef, Pattern, per_element, register
from chipsim.ir.types import TensorType


def erf(x: np.ndarray) -> np.ndarray:
    """The error function to within 1.5e-7 (Abramowitz & Stegun 1964, formula 7.1.26),
    far below float32's resolution of GELU's values; numpy has no erf of its own."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = 0.0
    for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly = (poly + a) * t
    return (np.sign(x) * (1.0 - poly * np.exp(-z * z))).astype(x.dtype)


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = a[0]
    half = np.asarray(0.5, x.dtype)
    return half * x * (1 + erf(x * np.asarray(1 / np.sqrt(2.0), x.dtype)))


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    if not ins[0].dtype.is_float:
        raise ShapeError(f"gelu_erf needs a floating-point input, got {ins[0]}; cast it to f32")
    return ins[0]


register(
    OpDef(
        "gelu_erf",
        Pattern.ELEMENTWISE,
        (1, 1),
        _infer,
        _compute,
        per_element(10),
        doc="GELU with the exact error function, x * (1 + erf(x / sqrt 2)) / 2 (as in BERT)",
        vector_slots=10,  # a polynomial erf and an exp, as vector units compute it
        examples=(Example((TensorType((64, 48), f32),)),),
    )
)
