"""chipsim: computation graphs mapped onto a simulated AI chip — the course's teaching package.

Two entry points, one op library:

* eager — ``x = chipsim.tensor(...)``; every op runs at once, as one kernel, on the current
  device;
* static — ``chipsim.trace(fn, *examples)`` or ``@chipsim.jit`` record a :class:`Graph`
  that compiler passes can optimise as a whole.
"""

from chipsim.errors import (
    ChipConfigError,
    ChipsimError,
    ExecutionError,
    IRError,
    OutOfMemoryError,
    PartitionError,
    PassError,
    PlanError,
    SerializationError,
    ShapeError,
    SimulationError,
    TraceError,
)
from chipsim.frontend.control import cond, where
from chipsim.frontend.device import Device, HostDevice, KernelRecord, current_device
from chipsim.frontend.eager import Tensor, tensor
from chipsim.frontend.functions import (
    add,
    broadcast_to,
    cast,
    concat,
    conv2d,
    div,
    eq,
    exp,
    gelu,
    gt,
    layernorm,
    log,
    lt,
    matmul,
    max,
    maximum,
    mean,
    minimum,
    mul,
    neg,
    relu,
    reshape,
    rsqrt,
    sigmoid,
    slice,
    softmax,
    sqrt,
    sub,
    sum,
    tanh,
    transpose,
)
from chipsim.frontend.tracing import Jitted, jit, trace
from chipsim.ir import (
    DType,
    Graph,
    GraphBuilder,
    Node,
    Pattern,
    TensorType,
    Value,
    bf16,
    boolean,
    f16,
    f32,
    i8,
    i32,
    interpret,
    verify,
)

__version__ = "0.1.0"

__all__ = [
    "ChipConfigError", "ChipsimError", "ExecutionError", "IRError", "OutOfMemoryError",
    "PartitionError", "PassError", "PlanError", "SerializationError", "ShapeError",
    "SimulationError", "TraceError",
    "cond", "where", "Device", "HostDevice", "KernelRecord", "current_device", "Tensor", "tensor",
    "add", "broadcast_to", "cast", "concat", "conv2d", "div", "eq", "exp", "gelu", "gt",
    "layernorm", "log", "lt", "matmul", "max", "maximum", "mean", "minimum", "mul", "neg", "relu",
    "reshape", "rsqrt", "sigmoid", "slice", "softmax", "sqrt", "sub", "sum", "tanh", "transpose",
    "Jitted", "jit", "trace",
    "DType", "Graph", "GraphBuilder", "Node", "Pattern", "TensorType", "Value",
    "bf16", "boolean", "f16", "f32", "i8", "i32", "interpret", "verify",
]
