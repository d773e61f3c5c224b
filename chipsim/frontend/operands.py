"""What an op's operands are besides tensors: Python numbers and numpy arrays, and the types
they take (the same rules eagerly and while tracing)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.errors import ShapeError
from chipsim.frontend.tensor_base import TensorBase
from chipsim.ir.dtypes import DType, f32, from_numpy, to_storage
from chipsim.ir.types import TensorType


def reference_dtype(op: str, operands: Sequence[Any]) -> DType | None:
    """The dtype a Python scalar operand takes: that of the tensors it meets."""
    candidates = operands[1:] if op == "where" else operands
    for x in candidates:
        if isinstance(x, TensorBase):
            return x.dtype
        if isinstance(x, np.ndarray):
            return from_numpy(x.dtype)
    return None


def scalar_array(x: Any, ref: DType | None, op: str) -> np.ndarray:
    """A Python number as a 0-d array of the reference dtype, refusing lossy conversions."""
    dt = ref or (f32 if isinstance(x, float) else from_numpy(np.asarray(x).dtype))
    if isinstance(x, float) and dt.kind != "float" and not float(x).is_integer():
        raise ShapeError(
            f"{op}: cannot combine a {dt} tensor with the float {x!r}; "
            f"cast the tensor to f32 first (t.astype('f32'))"
        )
    return to_storage(np.asarray(x), dt)


def example_type(x: Any) -> TensorType:
    """The static type of an example input (array, tensor or TensorType)."""
    if isinstance(x, TensorType):
        return x
    if isinstance(x, TensorBase):
        return x.type
    arr = np.asarray(x)
    return TensorType(arr.shape, from_numpy(arr.dtype))
