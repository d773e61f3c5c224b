"""Small workloads that each demonstrate one effect of the chapter.

* :mod:`~chipsim.workloads.eager` — run a whole graph eagerly, one kernel per op;
* :mod:`~chipsim.workloads.memory` — memory workloads (static vs dynamic allocation);
* :mod:`~chipsim.workloads.footprint` — their results: eager and static memory footprints;
* :mod:`~chipsim.workloads.mlp` — the MLP they run (plain tensor code: eager and traced);
* :mod:`~chipsim.workloads.overfusion` — over-fusion: one kernel too big for SRAM is slower;
* :mod:`~chipsim.workloads.blocks` — small seeded networks (chains, dense layers, a
  transformer block, a CNN) the chapters use and the exercises draw from.
"""

from chipsim.workloads import blocks, eager, footprint, memory, mlp, overfusion

__all__ = ["blocks", "eager", "footprint", "memory", "mlp", "overfusion"]
