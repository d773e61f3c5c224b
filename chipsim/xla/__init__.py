"""chipsim beside XLA: the book's graphs compiled by a production compiler on this CPU.

* :mod:`~chipsim.xla.hlo` — read XLA's optimised HLO text (no JAX needed);
* :mod:`~chipsim.xla.bridge` — a chipsim graph as a JAX function, node for node;
* :mod:`~chipsim.xla.compare` — XLA's kernels beside chipsim's fusion groups;
* :mod:`~chipsim.xla.timing` — wall time of eager numpy and ``jax.jit`` on this machine.

JAX (``pip install jax``) is needed only to compile; :func:`jax_problem` says whether it can
be imported.
"""

from chipsim.xla.bridge import JaxGraph, compile_xla, jax_problem, load_jax, to_jax
from chipsim.xla.compare import FusionComparison, compare_fusion, xla_kernels
from chipsim.xla.hlo import HloModule, Kernel, parse_hlo

__all__ = [
    "FusionComparison",
    "HloModule",
    "JaxGraph",
    "Kernel",
    "compare_fusion",
    "compile_xla",
    "jax_problem",
    "load_jax",
    "parse_hlo",
    "to_jax",
    "xla_kernels",
]
