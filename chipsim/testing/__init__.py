"""Generators of test cases (seeded, reproducible) for tests, benchmarks and notebooks.

* :mod:`chipsim.testing.memory_instances` — memory-planning instances (usage records);
* :mod:`chipsim.testing.graphs` — random small graphs and random valid partitions (fusion).

Nothing in chipsim's passes may rely on how these generators build their cases.
"""

from chipsim.testing.graphs import REALISTIC_DIMS, TINY_DIMS, random_graph, random_partition
from chipsim.testing.memory_instances import (
    heavy_tailed_records,
    long_lived_records,
    packed_instance,
    random_records,
    tight_records,
)

__all__ = [
    "REALISTIC_DIMS",
    "TINY_DIMS",
    "random_graph",
    "random_partition",
    "heavy_tailed_records",
    "long_lived_records",
    "packed_instance",
    "random_records",
    "tight_records",
]
