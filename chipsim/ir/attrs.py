"""The attributes of a node: an immutable, ordered, hashable mapping, and the payload of a
``constant`` node (:class:`ConstData`).

Example:
    >>> Attrs({"axis": -1, "shape": [2, 3]})
    {axis=-1, shape=(2, 3)}
    >>> ConstData.of([1.0, 2.0]).array()
    array([1., 2.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.ir.dtypes import DType, from_numpy, to_storage


class Attrs(Mapping[str, Any]):
    """An immutable, ordered, hashable mapping of attribute names to plain values."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items: tuple[tuple[str, Any], ...] = tuple(sorted((k, _freeze(v)) for k, v in pairs))

    def __getitem__(self, key: str) -> Any:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attrs) and self._items == other._items

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={v!r}" for k, v in self._items) + "}"


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ConstData.of(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True, slots=True)
class ConstData:
    """The payload of a ``constant`` node: raw bytes plus shape and dtype, hashable."""

    data: bytes
    shape: tuple[int, ...]
    dtype: DType

    @staticmethod
    def of(array: Any, dt: DType | None = None) -> ConstData:
        arr = np.asarray(array)
        dt = dt or from_numpy(arr.dtype)  # float64 -> f32, float16 stays f16 (as eager does)
        arr = np.array(to_storage(arr, dt), order="C")
        return ConstData(arr.tobytes(), tuple(arr.shape), dt)

    def array(self) -> np.ndarray:
        """A fresh, writable numpy array with the constant's values."""
        return np.frombuffer(self.data, dtype=self.dtype.numpy).reshape(self.shape).copy()

    def __repr__(self) -> str:
        arr = self.array()
        if arr.size == 1:
            return repr(arr.reshape(()).item())
        return f"<{self.dtype.name}{list(self.shape)} constant>"
