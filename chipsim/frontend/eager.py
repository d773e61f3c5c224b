"""Eager tensors: every operation runs immediately, as one kernel, on a device.

Example:
    >>> import chipsim as cs
    >>> x = cs.tensor([3.0])
    >>> y = (x + 1) * 2
    >>> y.numpy()
    array([8.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError, IRError
from chipsim.frontend.device import Device, current_device
from chipsim.frontend.location import user_location
from chipsim.frontend.operands import reference_dtype, scalar_array
from chipsim.frontend.tensor_base import TensorBase
from chipsim.ir.attrs import Attrs
from chipsim.ir.dtypes import DType, dtype, from_numpy, to_storage
from chipsim.ir.graph import Node, Value
from chipsim.ir.ops import infer_type
from chipsim.ir.types import TensorType


class Tensor(TensorBase):
    """A tensor that lives on a device. Its memory is released when the object dies."""

    __slots__ = ("_buffer", "_type", "_device", "__weakref__")

    def __init__(self, buffer: Any, type: TensorType, device: Device) -> None:
        self._buffer = buffer
        self._type = type
        self._device = device

    @staticmethod
    def from_numpy(
        array: Any, dt: DType | str | None = None, device: Device | None = None
    ) -> Tensor:
        try:
            arr = np.asarray(array)
        except ValueError as exc:  # ragged nested lists
            raise IRError(
                f"cannot make a tensor of {_short(array)}: {str(exc).rstrip('.')}. Every row "
                "of a nested list must have the same length (a tensor is a rectangular block "
                "of numbers)"
            ) from None
        if arr.dtype.kind not in "biuf":  # text, objects, dates, complex numbers
            raise IRError(_not_numbers(array, arr))
        target = dtype(dt) if dt is not None else from_numpy(arr.dtype)
        arr = np.array(to_storage(arr, target), order="C")
        device = device or current_device()
        ttype = TensorType(arr.shape, target)
        return Tensor(device.upload(arr, ttype), ttype, device)

    @property
    def type(self) -> TensorType:
        return self._type

    def _apply(self, op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
        return apply_eager(op, operands, attrs)

    @property
    def buffer(self) -> Any:
        return self._buffer

    @property
    def device(self) -> Device:
        return self._device

    def numpy(self) -> np.ndarray:
        """Copy the values back to the host as a numpy array."""
        return self._device.download(self._buffer, self._type)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self) -> Any:
        return self.numpy().item()

    def __bool__(self) -> bool:
        return bool(self.numpy())

    def __float__(self) -> float:
        return float(self.numpy())

    def __int__(self) -> int:
        return int(self.numpy())

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", threshold=20)
        return f"tensor({body}, dtype={self.dtype}, device={self._device.name})"

    def __del__(self) -> None:
        try:
            self._device.release(self._buffer, self._type)
        except Exception:  # noqa: BLE001 - never raise from a finaliser (interpreter shutdown)
            pass


def apply_eager(op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Tensor:
    """Run ``op`` now, as one kernel, on the device of its tensor operands (or the current
    device); numbers and arrays among the operands are uploaded first."""
    ref = reference_dtype(op, operands)
    devices = {id(x.device): x.device for x in operands if isinstance(x, Tensor)}
    if len(devices) > 1:
        names = ", ".join(d.name for d in devices.values())
        raise ChipsimError(
            f"{op}: operands live on different devices ({names}); "
            "move them to one device with chipsim.tensor(t.numpy())"
        )
    device = next(iter(devices.values())) if devices else current_device()
    tensors = []
    for x in operands:
        if isinstance(x, Tensor):
            tensors.append(x)
        elif isinstance(x, np.ndarray):
            tensors.append(Tensor.from_numpy(x, device=device))
        else:
            # pass ref on: bf16 is stored as float32, so the array alone would say f32
            tensors.append(Tensor.from_numpy(scalar_array(x, ref, op), ref, device=device))
    frozen = Attrs(attrs)
    out_type = infer_type(op, [t.type for t in tensors], frozen)
    node = Node(op, tuple(Value(t.type) for t in tensors), frozen, Value(out_type), user_location())
    buffer = device.run(node, [t.buffer for t in tensors])
    return Tensor(buffer, out_type, device)


def tensor(data: Any, dtype: DType | str | None = None) -> Tensor:
    """Create an eager tensor on the current device from a number, list or numpy array.

    Python floats and float64 arrays become ``f32``; Python ints become ``i32``.
    """
    return Tensor.from_numpy(data, dtype)


def _not_numbers(data: Any, arr: np.ndarray) -> str:
    """Why ``data`` cannot become a tensor, and what to pass instead."""
    kind = {"U": "text", "S": "bytes", "O": "Python objects", "c": "complex numbers"}.get(
        arr.dtype.kind, f"numpy dtype {arr.dtype}"
    )
    return (
        f"a tensor holds numbers, but numpy reads {_short(data)} as {kind} (dtype "
        f"{arr.dtype}); pass a "
        "number, a list of numbers (nested for more dimensions, every row the same length) "
        "or a numeric numpy array, e.g. cs.tensor([1.0, 2.0, 3.0])"
    )


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 40 else text[:37] + "..."
