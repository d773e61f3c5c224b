"""Byte-addressed memories: a tensor is bytes at an offset, viewed with a dtype.

Memories grow their backing numpy array on demand, so an 80 GiB HBM costs only the bytes
a program actually touches; reading bytes never written gives zeros.

Example:
    >>> import numpy as np
    >>> from chipsim.hw.memory import Memory
    >>> from chipsim.hw.isa import Operand
    >>> m = Memory("sram", 1024)
    >>> t = Operand("sram", 16, (2, 2), "f32")
    >>> m.write(t, np.ones((2, 2)))
    >>> float(m.read(t).sum())
    4.0
"""

from __future__ import annotations

import numpy as np

from chipsim.errors import SimulationError
from chipsim.hw.isa import STORAGE, Operand


def bf16_decode(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bf16_encode(values: np.ndarray) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns, rounding to nearest even."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + ((bits >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)) >> np.uint32(16)
    out = rounded.astype(np.uint16)
    out[np.isnan(values)] = 0x7FC0
    return out


class Memory:
    """One memory level (``dram``, ``sram`` or ``reg``) of ``capacity`` bytes."""

    def __init__(self, name: str, capacity: int) -> None:
        self.name = name
        self.capacity = capacity
        self._data = np.zeros(0, dtype=np.uint8)

    def check(self, op: Operand, where: str) -> tuple[int, int]:
        """Raise :class:`SimulationError` if ``op`` is not inside this memory."""
        lo, hi = op.byte_range()
        if lo < 0 or hi > self.capacity:
            raise SimulationError(
                f"{where}: tensor {op} touches bytes [{lo}, {hi}) but {self.name} holds "
                f"{self.capacity} bytes; place the tensor inside the memory or use a smaller tile"
            )
        return lo, hi

    def _grow(self, hi: int) -> None:
        if hi > self._data.size:
            size = min(self.capacity, max(hi, 2 * self._data.size, 4096))
            grown = np.zeros(size, dtype=np.uint8)
            grown[: self._data.size] = self._data
            self._data = grown

    def _view(self, op: Operand, hi: int) -> np.ndarray:
        self._grow(hi)
        storage, itemsize = STORAGE[op.dtype]
        base = self._data[op.offset : hi].view(storage)
        if op.strides is None:
            return base.reshape(op.shape)
        strides = tuple(s * itemsize for s in op.strides)
        return np.lib.stride_tricks.as_strided(base, op.shape, strides)

    def read(self, op: Operand, where: str = "read") -> np.ndarray:
        """A fresh array with the values of ``op`` (bf16 decoded to float32)."""
        _, hi = self.check(op, where)
        if op.numel == 0:
            return np.zeros(
                op.shape, dtype=np.float32 if op.dtype == "bf16" else STORAGE[op.dtype][0]
            )
        view = self._view(op, hi)
        return bf16_decode(view) if op.dtype == "bf16" else view.copy()

    def write(self, op: Operand, values: np.ndarray, where: str = "write") -> None:
        """Store ``values`` (any shape with the same number of elements) into ``op``."""
        _, hi = self.check(op, where)
        values = np.asarray(values)
        if values.size != op.numel:
            raise SimulationError(
                f"{where}: {values.size} values do not fit tensor {op} ({op.numel} elements)"
            )
        if op.numel == 0:
            return
        values = values.reshape(op.shape)
        if op.dtype == "bf16":
            values = bf16_encode(values)
        self._view(op, hi)[...] = values.astype(STORAGE[op.dtype][0], copy=False)
