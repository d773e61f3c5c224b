"""Compiler passes: each is one function over the IR, composed by a :class:`Pipeline`.

* :mod:`~chipsim.passes.simplify` — constant folding, CSE, dead-code elimination;
* :mod:`~chipsim.passes.fold_batchnorm` — batch norm folded into the convolution before it;
* :mod:`~chipsim.passes.fusion` — operator fusion: partition the ops into kernels;
* :mod:`~chipsim.passes.memory` — liveness, memory planners, the lower bound, the validator;
* :mod:`~chipsim.passes.placement` — the memory level of every tensor;
* :mod:`~chipsim.passes.pipeline` — the :class:`Pipeline` of named :class:`Stage` objects.
"""

from chipsim.passes.fold_batchnorm import fold_batchnorm
from chipsim.passes.pipeline import Pipeline, PrintAfterEach, Stage
from chipsim.passes.placement import Placement, place
from chipsim.passes.simplify import simplify

__all__ = [
    "Pipeline",
    "Placement",
    "PrintAfterEach",
    "Stage",
    "fold_batchnorm",
    "place",
    "simplify",
]
