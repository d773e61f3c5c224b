"""The target as the compiler sees it: the memory levels a tensor can live in, and the fields of
a chip that the passes read.

The passes (fusion, placement) need a few numbers of the chip they compile for — how big its
SRAM and register file are, how fast DRAM is, whether an L2 cache sits in front of it — but
they sit below the hardware model and never import it. :class:`Chip` is the protocol they
are typed against: :class:`chipsim.hw.Chip` is one, and so is any object with these fields
(a stand-in with only some of them serves the passes that read only those).

Example:
    >>> from chipsim.hw import get_chip
    >>> isinstance(get_chip("edge-npu"), Chip)
    True
    >>> Level.SRAM == "sram", str(Level.DRAM), [str(level) for level in Level]
    (True, 'dram', ['dram', 'sram', 'reg'])
"""

from __future__ import annotations

from enum import Enum
from typing import Protocol, runtime_checkable


class Level(str, Enum):
    """A memory level a tensor can live in: off-chip DRAM, on-chip SRAM, the register file.

    A level is its name (``Level.DRAM == "dram"``), hashes like it and prints as it, so
    tables, reports and instructions read as before and dictionaries keyed by either agree.
    """

    DRAM = "dram"
    SRAM = "sram"
    REG = "reg"

    __hash__ = str.__hash__  # as its name: {"dram": ...}[Level.DRAM] works on every Python
    __repr__ = str.__repr__  # prints as its name ('dram'), in instructions and tables too

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: The memory levels, outermost first.
LEVELS: tuple[Level, ...] = tuple(Level)


class Memory(Protocol):
    """A memory of the chip: its size."""

    capacity_bytes: int


class Dram(Memory, Protocol):
    """Off-chip memory: its size and how many bytes it moves per cycle."""

    bytes_per_cycle: int


class Cache(Protocol):
    """The L2 cache in front of DRAM, if the chip has one."""

    @property
    def present(self) -> bool: ...


class Launch(Protocol):
    """What starting a kernel costs (cycles, for a kernel of a compiled graph)."""

    graph_cycles: int


class Simd(Protocol):
    """The vector unit: elements per cycle."""

    lanes: int


class TensorCore(Protocol):
    """The matrix unit: its tile ``(m, n, k)``."""

    tile: tuple[int, int, int]


class Sms(Protocol):
    """A GPU's streaming multiprocessors (``count`` 0: not a GPU)."""

    count: int


@runtime_checkable
class Chip(Protocol):
    """The fields of a chip the passes read (:class:`chipsim.hw.Chip` has them all)."""

    name: str
    registers: Memory
    sram: Memory
    dram: Dram
    l2: Cache
    launch: Launch
    simd: Simd
    tensor_core: TensorCore
    sm: Sms

    @property
    def tensor_flops_per_cycle(self) -> int: ...
