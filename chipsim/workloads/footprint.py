"""Memory footprints: what an eager run's allocator saw, what a static plan needs, compared.

* :class:`EagerMemory` — allocated and reserved bytes and fragmentation over an eager run
  (read from the caching allocator's history, :mod:`chipsim.hw.allocator`);
* :class:`StaticMemory` — the fixed footprint of compiled programs: weights, inputs/outputs
  and the memory plan's activation arena;
* :class:`MemoryComparison` — the two for one workload on one chip
  (the workloads are in :mod:`chipsim.workloads.memory`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chipsim.hw.allocator import MemorySample
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement import ALIGN
from chipsim.runtime.device import ChipDevice
from chipsim.target import Level


def _aligned(n: int) -> int:
    return align_up(n, ALIGN)


# -- results ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EagerMemory:
    """What the caching allocator saw during an eager run.

    Attributes:
        peak_allocated: most bytes held by live tensors at once.
        peak_reserved: most bytes taken from DRAM in segments (live tensors + cache).
        max_fragmentation: worst share of the cache outside its largest free block.
        history: one sample per malloc/free (event, allocated, reserved, largest free block).
        oom: the :class:`~chipsim.errors.OutOfMemoryError` message if the run failed, else ``None``.
    """

    peak_allocated: int
    peak_reserved: int
    max_fragmentation: float
    history: tuple[MemorySample, ...]
    oom: str | None = None

    def fragmentation(self) -> list[float]:
        """Fragmentation after every allocator event (0 when nothing is cached)."""
        out = []
        for s in self.history:
            cached = s.reserved - s.allocated
            out.append(0.0 if cached <= 0 else 1.0 - min(s.largest_free, cached) / cached)
        return out


@dataclass(frozen=True, slots=True)
class StaticMemory:
    """The footprint of the compiled program(s): fixed before the run, constant during it.

    Attributes:
        weights_bytes: parameters (graph inputs or constants), each 64-byte aligned.
        io_bytes: the other inputs and the outputs.
        arena_bytes: the memory plan's activation arena (largest over the programs).
        arena_lower_bound: peak live activation bytes; no plan can do better.
        programs: how many programs were compiled (one per shape bucket).
        dram_peak: highest DRAM address any program touches, measured by simulating it
            (weights, inputs, outputs, the spilled part of the arena, kernel scratch).
    """

    weights_bytes: int
    io_bytes: int
    arena_bytes: int
    arena_lower_bound: int
    programs: int = 1
    dram_peak: int = 0

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.io_bytes + self.arena_bytes


@dataclass(frozen=True, slots=True)
class MemoryComparison:
    """Eager (dynamic) versus compiled (static) memory for one workload on one chip."""

    workload: str
    chip: str
    eager: EagerMemory
    static: StaticMemory
    details: dict[str, Any]

    @property
    def ratio(self) -> float:
        """Static total / eager peak reserved (below 1: the static plan needs less)."""
        return self.static.total_bytes / self.eager.peak_reserved

    def as_dict(self) -> dict[str, Any]:
        """Plain numbers for tables (the history is left out)."""
        return {
            "workload": self.workload,
            "chip": self.chip,
            "eager_peak_allocated": self.eager.peak_allocated,
            "eager_peak_reserved": self.eager.peak_reserved,
            "eager_max_fragmentation": round(self.eager.max_fragmentation, 4),
            "eager_oom": self.eager.oom,
            "static_weights": self.static.weights_bytes,
            "static_io": self.static.io_bytes,
            "static_arena": self.static.arena_bytes,
            "static_arena_lower_bound": self.static.arena_lower_bound,
            "static_total": self.static.total_bytes,
            "static_programs": self.static.programs,
            "static_dram_peak": self.static.dram_peak,
            "static_over_eager_reserved": round(self.ratio, 4),
            "static_over_eager_allocated": round(
                self.static.total_bytes / self.eager.peak_allocated, 4
            ),
            **self.details,
        }


def _eager_memory(dev: ChipDevice, oom: str | None = None) -> EagerMemory:
    alloc = dev.allocator
    mem = EagerMemory(alloc.peak_allocated, alloc.peak_reserved, 0.0, tuple(alloc.history), oom)
    return dataclasses.replace(mem, max_fragmentation=max(mem.fragmentation(), default=0.0))


def _static_memory(programs: Sequence[Any], n_weights: int) -> StaticMemory:
    """Footprint of programs that run one at a time and share their first ``n_weights`` inputs.

    Weights are counted once; inputs/outputs and the arena are the largest of any program
    (a server reserves room for its largest bucket up front).
    """
    weights = io = arena = bound = peak = 0
    for prog in programs:
        peak = max(peak, prog.report.peak_bytes[Level.DRAM])  # the simulator checks the bounds
        g = prog.graph
        w = sum(_aligned(v.type.nbytes) for v in g.inputs[:n_weights])
        w += sum(
            _aligned(n.type.nbytes)
            for n in g.nodes
            if n.is_constant and prog.placement.level(n.output) == Level.DRAM
        )
        weights = max(weights, w)
        rest = [*g.inputs[n_weights:], *g.outputs]
        io = max(io, sum(_aligned(v.type.nbytes) for v in dict.fromkeys(rest)))
        arena = max(arena, prog.plan.arena_size)
        bound = max(bound, prog.plan.lower_bound)
    return StaticMemory(weights, io, arena, bound, len(programs), peak)
