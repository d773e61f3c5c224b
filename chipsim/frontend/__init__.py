"""Front ends: eager tensors and tracing into static graphs, over one op library.

The modules form a tree: :mod:`~chipsim.frontend.tensor_base` (operators shared by both kinds
of tensor) below :mod:`~chipsim.frontend.eager` (run each op now, on a
:mod:`~chipsim.frontend.device`) and :mod:`~chipsim.frontend.tracing` (record it into a
graph), :mod:`~chipsim.frontend.functions` (one public function per op) and
:mod:`~chipsim.frontend.control` (``cond``) above them.
"""

from chipsim.frontend.control import cond
from chipsim.frontend.device import Device, HostDevice, KernelRecord, current_device
from chipsim.frontend.eager import Tensor, tensor
from chipsim.frontend.functions import FUNCTIONS
from chipsim.frontend.tracing import Jitted, SymbolicTensor, jit, trace

__all__ = [
    "FUNCTIONS",
    "Device",
    "HostDevice",
    "Jitted",
    "KernelRecord",
    "SymbolicTensor",
    "Tensor",
    "cond",
    "current_device",
    "jit",
    "tensor",
    "trace",
]
