"""chipsim: computation graphs mapped onto a simulated AI chip — the course's teaching package.

Two entry points, one op library:

* eager — ``x = chipsim.tensor(...)``; every op runs at once, as one kernel, on the current
  device;
* static — ``chipsim.trace(fn, *examples)`` or ``@chipsim.jit`` record a :class:`Graph`
  that compiler passes can optimise as a whole.

The front door holds what a chapter's first cells use (at most 40 names); everything else is
imported from its room: the op functions from :mod:`chipsim.ops` (``cs.ops.relu(x)``),
partitions from :mod:`chipsim.passes.fusion`, memory plans from :mod:`chipsim.passes.memory`,
programs and reports from :mod:`chipsim.runtime`, graph parts from :mod:`chipsim.ir`.
"""

from chipsim import ops, viz  # noqa: F401  (importing viz registers the drawings: graph.draw() ...)
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
from chipsim.frontend.device import HostDevice, current_device
from chipsim.frontend.eager import Tensor, tensor
from chipsim.frontend.tracing import jit, trace
from chipsim.hw import Chip, get_chip, list_chips
from chipsim.ir import (
    DType,
    Graph,
    GraphBuilder,
    TensorType,
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

__version__ = "0.1.0"


def chip(name: str | Chip) -> Chip:
    """The preset chip called ``name`` (one of ``chips()``), or a chip read from a path.

    Example:
        >>> chip("edge-npu").name
        'edge-npu'
    """
    return get_chip(name)


def chips() -> list[str]:
    """The names of the preset chips, sorted (each one ``chip()`` accepts).

    Example:
        >>> "edge-npu" in chips()
        True
    """
    return list_chips()


__all__ = [
    # compile and run
    "compile",
    "PIPELINE",
    "device",
    "chip",
    "chips",
    "Chip",
    # eager tensors and tracing
    "tensor",
    "Tensor",
    "HostDevice",
    "current_device",
    "trace",
    "jit",
    "cond",
    "ops",
    # graphs and types
    "Graph",
    "GraphBuilder",
    "TensorType",
    "DType",
    "bf16",
    "boolean",
    "f16",
    "f32",
    "i8",
    "i32",
    "i64",
    "interpret",
    "verify",
    # errors
    "ChipsimError",
    "ChipConfigError",
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
]
