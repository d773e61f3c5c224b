"""The search planner's view of an instance: sections of time, aligned sizes, an effort budget.

Helper of :mod:`.search`. Two things make the search independent of how an instance was made:

* **Sections instead of steps.** Only the order of lifetime ends matters, never their values.
  A *section* is a stretch of time in which the set of live tensors is as large as it gets
  locally (a maximal clique of the interval graph): some tensor starts where it begins and
  some tensor ends where it ends. Every other moment sees a subset of some section's tensors,
  so a plan that keeps each section's tensors apart is valid, and a bound that holds for each
  section holds everywhere. There are at most ``n`` sections, however time is counted (the
  MiniMalloc benchmarks count it up to 1,048,576; a CSV may count nanoseconds).
* **Effort in work units, the clock only as a cap.** :class:`Effort` counts search nodes and
  placements; the search stops after a fixed number of them or at the deadline, whichever comes
  first. Until the deadline bites, every run does exactly the same work.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> recs = [UsageRecord("a", 100, 0, 10**9), UsageRecord("b", 64, 5, 3 * 10**9),
    ...         UsageRecord("c", 64, 10**9, 3 * 10**9)]
    >>> inst = Instance(recs, alignment=64)
    >>> inst.sizes, inst.spans, inst.section_bytes, inst.lower_bound
    ([128, 64, 64], [(0, 1), (0, 2), (1, 2)], [192, 128], 192)
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from chipsim.passes.memory.liveness import UsageRecord, align_up
from chipsim.passes.memory.planners import _best_offset, overlap_lists

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("memory_planning",)


class Instance:
    """Records as the arrays the search loops want.

    Attributes:
        records: the records, in the caller's order (every index below refers to it).
        sizes: aligned size per record.
        spans: ``(first section, end section)`` per record, half-open like lifetimes.
        members: per section, the records live in it.
        section_bytes: per section, the aligned bytes live in it.
        neighbours: per record, the records whose lifetimes overlap its own.
        lower_bound: the peak of live aligned bytes (the largest ``section_bytes``).
    """

    def __init__(self, records: Sequence[UsageRecord], alignment: int) -> None:
        self.records = list(records)
        self.alignment = alignment
        self.sizes = [align_up(r.size, alignment) for r in self.records]
        starts = sorted({r.first for r in self.records})
        ends = sorted({r.last for r in self.records})
        # A section [s, e): a lifetime starts at s, one ends at e, and none ends in between.
        sections = []
        for s in starts:
            e = ends[bisect_right(ends, s)]
            if not sections or sections[-1][1] != e:
                sections.append((s, e))
            else:
                sections[-1] = (s, e)  # a later start before the same end: a larger clique
        lows = [s for s, _ in sections]
        # A record [first, last) is live in the sections that begin inside it.
        self.spans = [(bisect_left(lows, r.first), bisect_left(lows, r.last)) for r in self.records]
        self.members: list[list[int]] = [[] for _ in sections]
        self.section_bytes = [0] * len(sections)
        for i, (a, b) in enumerate(self.spans):
            for k in range(a, b):
                self.members[k].append(i)
                self.section_bytes[k] += self.sizes[i]
        self.neighbours = overlap_lists(self.records)
        self.lower_bound = max(self.section_bytes, default=0)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def num_sections(self) -> int:
        return len(self.members)

    def arena(self, offsets: Sequence[int]) -> int:
        """The arena of a plan given as offsets in record order."""
        return max((o + s for o, s in zip(offsets, self.sizes, strict=False)), default=0)

    def place(self, order: Sequence[int], best_fit: bool, effort: Effort) -> list[int] | None:
        """Place the records in ``order`` with the rule of the greedy planners (best or first fit
        among the overlapping records placed so far); None if ``effort`` runs out on the way."""
        offsets = [-1] * len(self.records)
        for i in order:
            if not effort.spend():
                return None
            offsets[i] = _best_offset(i, self.neighbours[i], offsets, self.sizes, best_fit)
        return offsets


class Effort:
    """A budget of work units with a wall-clock cap.

    ``spend()`` counts one unit and says whether the search may go on. It stops the search
    once ``units`` are spent (a property of the instance and the seed: the same on every
    machine) or once ``time_limit`` seconds have passed (the cap that keeps a promise to the
    user, and the only thing that differs between machines).
    """

    #: Read the clock once per this many units (a clock read costs more than a unit of work).
    CLOCK_EVERY = 16

    def __init__(self, time_limit: float, units: int | None = None) -> None:
        self.start = time.perf_counter()
        self.deadline = self.start + time_limit
        self.units = units
        self.used = 0
        self.out_of_time = False

    def spend(self, k: int = 1) -> bool:
        """Count ``k`` units; False once the budget or the time is spent."""
        if self.out_of_time:
            return False
        self.used += k
        if self.units is not None and self.used > self.units:
            return False
        if self.used % self.CLOCK_EVERY < k and time.perf_counter() > self.deadline:
            self.out_of_time = True
            return False
        return True

    def past_deadline(self) -> bool:
        """Read the clock now: True (and stop for good) once the time limit has passed."""
        if time.perf_counter() > self.deadline:
            self.out_of_time = True
        return self.out_of_time

    @property
    def spent(self) -> bool:
        """True once ``spend`` has refused (budget or clock)."""
        return self.out_of_time or (self.units is not None and self.used > self.units)

    def seconds(self) -> float:
        return time.perf_counter() - self.start
