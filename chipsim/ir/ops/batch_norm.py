"""Batch normalisation for inference: per-channel statistics fixed after training.

``y = (x - mean) / sqrt(var + eps) * scale + bias`` over the last (channel) axis. At inference
it is an affine map per channel, so :func:`chipsim.passes.fold_batchnorm.fold_batchnorm` folds it
into the convolution before it. ``scale`` and ``bias`` are learned parameters; ``mean`` and
``var`` are running statistics (:data:`STATISTICS`), not parameters.
"""

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

INPUTS = ("x", "scale", "bias", "mean", "var")
STATISTICS = (3, 4)  # input positions of the running statistics (not learned parameters)


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    x = ins[0]
    if not x.dtype.is_float or x.rank < 1:
        raise ShapeError(f"batch_norm needs a float tensor with a channel axis, got {x}")
    for name, t in zip(INPUTS[1:], ins[1:], strict=True):
        if t.shape != (x.shape[-1],) or t.dtype != x.dtype:
            raise ShapeError(
                f"batch_norm's {name} must be {x.dtype.name}[{x.shape[-1]}] (one per channel "
                f"of {x}), got {t}"
            )
    return x


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, scale, bias, mean, var = a
    inv = scale / np.sqrt(var + np.asarray(attrs["eps"], x.dtype))
    return (x - mean) * inv + bias


register(
    OpDef(
        "batch_norm",
        Pattern.BROADCAST,
        (5, 5),
        _infer,
        _compute,
        per_element(2),  # per element a multiply-add; the per-channel factors are negligible
        attrs={"eps": AttrSpec(default=1e-5, check=a_float, doc="added to var")},
        doc="inference batch norm over the last axis: (x - mean) / sqrt(var + eps) * scale + bias",
        inputs=INPUTS,
        vector_slots=2,
        examples=(
            Example(
                (
                    TensorType((4, 6, 6, 8), f32),
                    TensorType((8,), f32),
                    TensorType((8,), f32),
                    TensorType((8,), f32),
                    TensorType((8,), f32),
                ),
                low=0.1,
            ),
        ),
    )
)
