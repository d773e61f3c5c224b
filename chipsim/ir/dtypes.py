"""Element types of tensors, with their sizes in bytes.

``bf16`` has no numpy type: values are held in float32 and rounded to bfloat16 precision
(round-to-nearest-even on the top 16 bits) whenever an op produces a bf16 result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chipsim.errors import IRError


@dataclass(frozen=True, slots=True)
class DType:
    """An element type: its short name (``f32``), its size in bytes and its numpy storage."""

    name: str
    itemsize: int
    numpy_name: str
    kind: str  # "float", "int" or "bool"

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype used to hold values of this type."""
        return np.dtype(self.numpy_name)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name


f32 = DType("f32", 4, "float32", "float")
f16 = DType("f16", 2, "float16", "float")
bf16 = DType("bf16", 2, "float32", "float")
i8 = DType("i8", 1, "int8", "int")
i32 = DType("i32", 4, "int32", "int")
i64 = DType("i64", 8, "int64", "int")
boolean = DType("bool", 1, "bool", "bool")

DTYPES: dict[str, DType] = {d.name: d for d in (f32, f16, bf16, i8, i32, i64, boolean)}

_FROM_NUMPY = {
    "float32": f32,
    "float64": f32,
    "float16": f16,
    "int8": i8,
    "int32": i32,
    "int64": i32,
    "bool": boolean,
}


def dtype(name: str | DType) -> DType:
    """Look up a dtype by name (``"f32"``) or pass one through."""
    if isinstance(name, DType):
        return name
    try:
        return DTYPES[name]
    except (KeyError, TypeError):
        known = ", ".join(DTYPES)
        raise IRError(f"unknown dtype {name!r}; use one of: {known}") from None


def from_numpy(np_dtype: np.dtype) -> DType:
    """The chipsim dtype for a numpy array (float64 becomes f32, int64 becomes i32)."""
    try:
        return _FROM_NUMPY[np.dtype(np_dtype).name]
    except KeyError:
        raise IRError(
            f"numpy dtype {np.dtype(np_dtype).name} has no chipsim equivalent; "
            f"convert with .astype(np.float32) first"
        ) from None


def round_bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    arr = np.asarray(values, dtype=np.float32)
    flat = arr.reshape(-1)  # work in 1-D: a 0-d array cannot be viewed as another dtype
    bits = np.ascontiguousarray(flat).view(np.uint32)
    rounding = ((bits >> 16) & 1) + np.uint32(0x7FFF)
    rounded = ((bits + rounding) & np.uint32(0xFFFF0000)).astype(np.uint32)
    out = rounded.view(np.float32).copy()
    out[np.isnan(flat)] = np.nan
    return out.reshape(arr.shape)


def to_storage(values: np.ndarray, dt: DType) -> np.ndarray:
    """Convert numpy values to the storage of ``dt`` (with bf16 rounding)."""
    arr = np.asarray(values).astype(dt.numpy, copy=False)
    if dt is bf16:
        arr = round_bf16(arr)
    return arr
