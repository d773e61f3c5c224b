"""The compiler: ``compile`` as a :class:`Pipeline` of named stages, and the fusion stage's
reference pass.

* :mod:`~chipsim.compiler.pipeline` — :func:`compile`, :data:`PIPELINE` and its first three
  stages (trace, simplify, fuse);
* :mod:`~chipsim.compiler.fusion` — the reference fusion as named stages (the code
  generator's capacity rule, the rule pass, the autotuner, the fastest whole program of
  those), the named fusion passes, and how any pass is run and checked;
* :mod:`~chipsim.compiler.lowering` — after fusion: ``compile``'s last four stages
  (liveness, memory plan, placement, code), the :class:`CompileState` they hand on, and a
  partition's whole program for the reference fusion's last stage;
* :mod:`~chipsim.compiler.records` — the tensors kept between kernels, for the planner;
* :mod:`~chipsim.compiler.chip_device` — ``chipsim.device``: an eager device handed
  the compiler.
"""

from chipsim.compiler.chip_device import device
from chipsim.compiler.fusion import (
    ESTIMATED_FUSION,
    FUSION_PASSES,
    REFERENCE_FUSION,
    FusionState,
    estimated_fusion,
    get_fusion,
    reference_fusion,
    run_fusion,
)
from chipsim.compiler.pipeline import PIPELINE, CompileState, Pipeline, Stage, compile
from chipsim.compiler.records import kernel_records

__all__ = [
    "ESTIMATED_FUSION",
    "FUSION_PASSES",
    "FusionState",
    "REFERENCE_FUSION",
    "estimated_fusion",
    "PIPELINE",
    "CompileState",
    "Pipeline",
    "Stage",
    "compile",
    "device",
    "get_fusion",
    "kernel_records",
    "reference_fusion",
    "run_fusion",
]
