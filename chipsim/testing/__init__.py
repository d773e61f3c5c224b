"""Generators of test cases (seeded, reproducible) for tests, benchmarks and notebooks.

* :mod:`chipsim.testing.memory_instances` — memory-planning instances (usage records).

Nothing in chipsim's passes may rely on how these generators build their cases.
"""

from chipsim.testing.memory_instances import (
    heavy_tailed_records,
    long_lived_records,
    packed_instance,
    random_records,
    tight_records,
)

__all__ = [
    "heavy_tailed_records",
    "long_lived_records",
    "packed_instance",
    "random_records",
    "tight_records",
]
