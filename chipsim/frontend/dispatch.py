"""Route one op call to the tracer (static graph) or to the current device (eager)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError, ShapeError
from chipsim.i18n import tr
from chipsim.ir.dtypes import DType, from_numpy
from chipsim.ir.graph import Attrs, Node, Value
from chipsim.ir.ops import infer_type
from chipsim.ir.types import TensorType

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame() -> tuple[str, int]:
    """(file name, line) of the innermost caller outside the chipsim package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "", 0


def format_location(filename: str, line: int) -> str:
    """``file.py:12``; a Jupyter cell (a temporary ``ipykernel_*`` file) reads ``cell, line 12``."""
    if not filename:
        return ""
    if re.search(r"ipykernel_\d+", filename):
        return tr("notebook cell, line {line}", line=line)
    return f"{filename}:{line}"


def user_location() -> str:
    """Where the user's code is: ``file.py:LINE`` (or ``notebook cell, line N``)."""
    return format_location(*user_frame())


def _is_tensor(x: Any) -> bool:
    from chipsim.frontend.tensor_base import TensorBase

    return isinstance(x, TensorBase)


def _reference_dtype(op: str, operands: Sequence[Any]) -> DType | None:
    """The dtype a Python scalar operand takes: that of the tensors it meets."""
    candidates = operands[1:] if op == "where" else operands
    for x in candidates:
        if _is_tensor(x):
            return x.dtype
        if isinstance(x, np.ndarray):
            return from_numpy(x.dtype)
    return None


def scalar_array(x: Any, ref: DType | None, op: str) -> np.ndarray:
    """A Python number as a 0-d array of the reference dtype, refusing lossy conversions."""
    from chipsim.ir.dtypes import f32, to_storage

    dt = ref or (f32 if isinstance(x, float) else from_numpy(np.asarray(x).dtype))
    if isinstance(x, float) and dt.kind != "float" and not float(x).is_integer():
        raise ShapeError(
            f"{op}: cannot combine a {dt} tensor with the float {x!r}; "
            f"cast the tensor to f32 first (t.astype('f32'))"
        )
    return to_storage(np.asarray(x), dt)


def apply(op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """Run ``op`` on ``operands``: record it if any operand is traced, else run it eagerly."""
    from chipsim.frontend.tracing import SymbolicTensor

    tracers = {id(x.tracer): x.tracer for x in operands if isinstance(x, SymbolicTensor)}
    if len(tracers) > 1:
        raise ChipsimError(
            f"{op}: operands come from two different traces; "
            "a traced function can only combine its own values"
        )
    if tracers:
        (tracer,) = tracers.values()
        return tracer.record(op, operands, attrs, _reference_dtype(op, operands))
    return _apply_eager(op, operands, attrs)


def _apply_eager(op: str, operands: Sequence[Any], attrs: dict[str, Any]) -> Any:
    from chipsim.frontend.device import current_device
    from chipsim.frontend.eager import Tensor

    ref = _reference_dtype(op, operands)
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


def example_type(x: Any) -> TensorType:
    """The static type of an example input (array, tensor or TensorType)."""
    if isinstance(x, TensorType):
        return x
    if _is_tensor(x):
        return x.type
    arr = np.asarray(x)
    return TensorType(arr.shape, from_numpy(arr.dtype))
