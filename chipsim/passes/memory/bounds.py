"""The lower bound on any memory plan: the peak of live bytes over time.

At every step, all live tensors need distinct bytes, so no arena can be smaller than the sum of
their (aligned) sizes at the busiest step. A planner that reaches this bound is optimal; the
gap between a plan's arena and the bound is fragmentation.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> recs = [UsageRecord("a", 100, 0, 2), UsageRecord("b", 64, 1, 3), UsageRecord("c", 64, 2, 3)]
    >>> live_bytes(recs)
    [128, 192, 128]
    >>> lower_bound(recs)
    192
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.passes.memory.liveness import (
    DEFAULT_ALIGNMENT,
    UsageRecord,
    align_up,
    check_alignment,
)


def live_bytes(records: Sequence[UsageRecord], *, alignment: int = DEFAULT_ALIGNMENT) -> list[int]:
    """Aligned bytes live at each step ``0 .. max(last) - 1``."""
    check_alignment(alignment)
    steps = max((r.last for r in records), default=0)
    delta = [0] * (steps + 1)  # difference array: +size at first, -size at last
    for r in records:
        size = align_up(r.size, alignment)
        delta[r.first] += size
        delta[r.last] -= size
    profile, running = [], 0
    for d in delta[:steps]:
        running += d
        profile.append(running)
    return profile


def lower_bound(records: Sequence[UsageRecord], *, alignment: int = DEFAULT_ALIGNMENT) -> int:
    """Peak of live (aligned) bytes over all steps: no valid plan has a smaller arena.

    A sweep over the lifetime ends (at a step, ends before starts: lifetimes are half-open), so
    its cost does not depend on how large the step numbers are (a CSV may count nanoseconds).
    """
    check_alignment(alignment)
    events = sorted(
        (t, sign * align_up(r.size, alignment))
        for r in records
        for t, sign in ((r.first, 1), (r.last, -1))
    )
    peak = running = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak
