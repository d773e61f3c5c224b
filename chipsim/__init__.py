"""chipsim: computation graphs mapped onto a simulated AI chip — the course's teaching package.

Two entry points, one op library:

* eager — ``x = chipsim.tensor(...)``; every op runs at once, as one kernel, on the current
  device;
* static — ``chipsim.trace(fn, *examples)`` or ``@chipsim.jit`` record a :class:`Graph`
  that compiler passes can optimise as a whole.
"""

from chipsim import viz  # noqa: F401  (importing viz registers the drawings: graph.draw() ...)
from chipsim.compiler import PIPELINE, compile, device
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
from chipsim.frontend.control import cond
from chipsim.frontend.device import Device, HostDevice, KernelRecord, current_device
from chipsim.frontend.eager import Tensor, tensor
from chipsim.frontend.functions import *  # noqa: F403  (one function per op of the registry)
from chipsim.frontend.functions import FUNCTIONS
from chipsim.frontend.tracing import Jitted, jit, trace
from chipsim.hw import Chip
from chipsim.hw import get_chip as chip
from chipsim.hw import list_chips as chips
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
    i64,
    interpret,
    verify,
)
from chipsim.passes.fusion import Partition, validate_partition
from chipsim.passes.memory import MemoryPlan, UsageRecord, validate_plan
from chipsim.passes.memory.plan import make_plan
from chipsim.runtime import ChipDevice, Report
from chipsim.runtime.program import Program

__version__ = "0.1.0"

__all__ = [
    "PIPELINE",
    "compile",
    "ChipConfigError",
    "ChipsimError",
    "ExecutionError",
    "IRError",
    "OutOfMemoryError",
    "PartitionError",
    "PassError",
    "PlanError",
    "SerializationError",
    "ShapeError",
    "SimulationError",
    "TraceError",
    "cond",
    "Device",
    "HostDevice",
    "KernelRecord",
    "current_device",
    "Tensor",
    "tensor",
    "Jitted",
    "jit",
    "trace",
    "Chip",
    "chip",
    "chips",
    "DType",
    "Graph",
    "GraphBuilder",
    "Node",
    "Pattern",
    "TensorType",
    "Value",
    "bf16",
    "boolean",
    "f16",
    "f32",
    "i8",
    "i32",
    "i64",
    "interpret",
    "verify",
    "Partition",
    "validate_partition",
    "MemoryPlan",
    "make_plan",
    "validate_plan",
    "UsageRecord",
    "ChipDevice",
    "Report",
    "device",
    "Program",
    *FUNCTIONS,
]
