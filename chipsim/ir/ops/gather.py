"""Gather rows of a table by integer index: the embedding lookup of language models."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chipsim.errors import ShapeError
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import f32, i32
from chipsim.ir.ops.registry import Example, OpDef, Pattern, no_flops, register
from chipsim.ir.types import TensorType


def _infer(ins: Sequence[TensorType], attrs: Attrs) -> TensorType:
    table, idx = ins
    if table.rank < 1:
        raise ShapeError(f"gather needs a table of rank >= 1, got {table}")
    if idx.dtype.kind != "int":
        raise ShapeError(f"gather's indices must be integers (e.g. i32), got {idx}; cast them")
    return table.with_shape(idx.shape + table.shape[1:])


def _compute(a: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    table, idx = a
    n = table.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)].flat[0]
        raise ShapeError(f"gather: index {bad} is out of range for a table of {n} rows")
    return np.take(table, idx, axis=0)


register(
    OpDef(
        "gather",
        Pattern.INJECTIVE,  # each output element is one table element
        (2, 2),
        _infer,
        _compute,
        no_flops,
        doc="rows of a table by index: out[i, ...] = table[indices[i], ...] (embedding lookup)",
        inputs=("table", "indices"),
        # rows of the output follow rows of the indices; the table is needed whole
        rows=lambda ins, out, attrs: (False, True) if ins[1].rank else None,
        examples=(
            Example((TensorType((50, 16), f32), TensorType((8, 12), i32))),
            Example((TensorType((20, 4, 6), f32), TensorType((10,), i32))),
        ),
    )
)
