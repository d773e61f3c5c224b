"""Tensor types: a shape and an element type."""

from __future__ import annotations

import math
from dataclasses import dataclass

from chipsim.errors import IRError
from chipsim.ir.dtypes import DType, dtype


@dataclass(frozen=True, slots=True)
class TensorType:
    """The static type of a tensor: ``TensorType((4, 8), f32)`` prints as ``f32[4, 8]``."""

    shape: tuple[int, ...]
    dtype: DType

    def __post_init__(self) -> None:
        shape = tuple(self.shape)
        for dim in shape:
            if not isinstance(dim, int) or isinstance(dim, bool) or dim < 0:
                raise IRError(f"bad shape {self.shape!r}: every dimension must be an int >= 0")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtype(self.dtype))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Number of elements (1 for a scalar)."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Size in bytes when stored densely."""
        return self.numel * self.dtype.itemsize

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dt: DType | str) -> TensorType:
        return TensorType(self.shape, dtype(dt))

    def __str__(self) -> str:
        return f"{self.dtype.name}[{', '.join(str(d) for d in self.shape)}]"

    __repr__ = __str__
