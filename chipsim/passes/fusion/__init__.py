"""Operator fusion: divide a graph's ops into kernels (a :class:`Partition`).

* :mod:`~chipsim.passes.fusion.partition` — the :class:`Partition` data and its validator;
* :mod:`~chipsim.passes.fusion.rules` — the fusion rules as a table over op patterns;
* :mod:`~chipsim.passes.fusion.capacity` — the SRAM working-set estimate of a kernel;
* :mod:`~chipsim.passes.fusion.cost` — the launch + roofline cycle estimate of a kernel;
* :mod:`~chipsim.passes.fusion.reference` — the rule pass and simple alternatives;
* :mod:`~chipsim.passes.fusion.search` — the autotuner: merge and move kernels by cost;
* :mod:`~chipsim.passes.fusion.exhaustive` — every valid partition of a small graph;
* :mod:`~chipsim.passes.fusion.generate` — random small graphs and random valid partitions
  (for tests and benchmarks).

The reference fusion ``chipsim.compile`` runs composes the rule pass and the autotuner with
the code generator's capacity rule: :func:`chipsim.compiler.fusion.reference_fusion`.
"""

from chipsim.passes.fusion.capacity import fits, max_tile_rows, working_set_bytes
from chipsim.passes.fusion.cost import kernel_cycles
from chipsim.passes.fusion.exhaustive import all_partitions, count_partitions
from chipsim.passes.fusion.generate import REALISTIC_DIMS, TINY_DIMS, random_graph, random_partition
from chipsim.passes.fusion.naming import kernel_name
from chipsim.passes.fusion.partition import Partition, group_outputs, validate_partition
from chipsim.passes.fusion.reference import (
    fuse_elementwise_chains,
    immediate_post_dominators,
    no_fusion,
    rule_fusion,
)
from chipsim.passes.fusion.rules import FUSION_TABLE, can_fuse, format_rules, group_pattern
from chipsim.passes.fusion.search import autotune

__all__ = [
    "FUSION_TABLE",
    "REALISTIC_DIMS",
    "TINY_DIMS",
    "Partition",
    "all_partitions",
    "autotune",
    "can_fuse",
    "count_partitions",
    "fits",
    "format_rules",
    "fuse_elementwise_chains",
    "group_outputs",
    "group_pattern",
    "immediate_post_dominators",
    "kernel_cycles",
    "kernel_name",
    "max_tile_rows",
    "no_fusion",
    "random_graph",
    "random_partition",
    "rule_fusion",
    "validate_partition",
    "working_set_bytes",
]
