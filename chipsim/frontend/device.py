"""Eager devices: where an eager :class:`~chipsim.frontend.eager.Tensor` lives and runs.

A device runs one op at a time, as one kernel. The default :class:`HostDevice` runs ops
with numpy and keeps a log of the kernels it ran; the simulated chip (``chipsim.device``)
subclasses :class:`Device` and runs each kernel on the simulator instead.

The current device is held in a context variable: ``with chipsim.device(...) as dev:``
makes ``dev`` current inside the block (and restores the previous one afterwards).
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.ir.graph import Node
from chipsim.ir.ops import execute
from chipsim.ir.types import TensorType


@dataclass(frozen=True, slots=True)
class KernelRecord:
    """One kernel an eager device ran: its name, op and the types it read and wrote."""

    name: str
    op: str
    inputs: tuple[TensorType, ...]
    output: TensorType

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        return f"{self.name}({ins}) -> {self.output}"


class Device:
    """Base class of eager devices. A buffer is whatever the device uses to hold a tensor.

    Subclasses implement :meth:`upload`, :meth:`download`, :meth:`run` and may implement
    :meth:`release` (called when a tensor is garbage-collected, so memory can be reused).
    """

    name = "device"

    def upload(self, array: np.ndarray, type: TensorType) -> Any:
        raise NotImplementedError

    def download(self, buffer: Any, type: TensorType) -> np.ndarray:
        raise NotImplementedError

    def run(self, node: Node, inputs: Sequence[Any]) -> Any:
        """Run ``node`` as one kernel on ``inputs`` (buffers) and return the result buffer."""
        raise NotImplementedError

    def release(self, buffer: Any, type: TensorType) -> None:
        """The tensor holding ``buffer`` is gone; its memory may be reused."""

    # context manager: `with device:` makes it current
    def __enter__(self) -> Device:
        self._token = _CURRENT.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)


class HostDevice(Device):
    """Runs every op immediately with numpy and logs one :class:`KernelRecord` per op."""

    name = "host"

    def __init__(self) -> None:
        self.kernels: list[KernelRecord] = []

    def upload(self, array: np.ndarray, type: TensorType) -> np.ndarray:
        return array

    def download(self, buffer: np.ndarray, type: TensorType) -> np.ndarray:
        return buffer.copy()

    def run(self, node: Node, inputs: Sequence[np.ndarray]) -> np.ndarray:
        self.kernels.append(
            KernelRecord(
                f"{node.op}_kernel", node.op, tuple(v.type for v in node.inputs), node.type
            )
        )
        return execute(node.op, inputs, node.attrs, node.type)


_DEFAULT = HostDevice()
_CURRENT: contextvars.ContextVar[Device] = contextvars.ContextVar(
    "chipsim_device", default=_DEFAULT
)


def current_device() -> Device:
    """The device eager tensors are created on and run on right now."""
    return _CURRENT.get()
