"""The reference memory planners: naive, first fit and greedy by size.

Every planner has the signature ``plan(records, *, alignment=64) -> MemoryPlan``. Sizes are
rounded up to ``alignment`` and every offset is a multiple of it. Lifetimes follow the one
convention of :mod:`chipsim.passes.memory.liveness`: half-open ``[first, last)``.

The two greedy planners share one idea: take the tensors in some order and give each the best
free offset among the tensors already placed *whose lifetimes overlap its own*; tensors that are
never live together may share bytes. They differ in the order and in what "best" means.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> recs = [UsageRecord("a", 128, 0, 2), UsageRecord("b", 64, 1, 3),
    ...         UsageRecord("c", 128, 2, 4)]
    >>> naive(recs).arena_size, first_fit(recs).arena_size, greedy_by_size(recs).arena_size
    (320, 192, 192)
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.passes.memory.liveness import (
    DEFAULT_ALIGNMENT,
    UsageRecord,
    align_up,
    check_alignment,
)
from chipsim.passes.memory.plan import MemoryPlan, make_plan
from chipsim.reference import reference_for


def naive(records: Sequence[UsageRecord], *, alignment: int = DEFAULT_ALIGNMENT) -> MemoryPlan:
    """No reuse: each tensor gets its own slot, one after the other in record order.

    The arena is the sum of the aligned sizes: what a program needs if it never frees memory.
    """
    check_alignment(alignment)
    offsets, top = [], 0
    for r in records:
        offsets.append(top)
        top += align_up(r.size, alignment)
    return make_plan(records, offsets, alignment, "naive")


@reference_for("memory_planning")
def first_fit(records: Sequence[UsageRecord], *, alignment: int = DEFAULT_ALIGNMENT) -> MemoryPlan:
    """In order of first use, put each tensor at the lowest offset where it fits.

    This is what a simple allocator does when tensors are created in program order, except that
    it knows the future: a tensor only avoids the tensors that will be live at the same time.
    """
    check_alignment(alignment)
    order = sorted(range(len(records)), key=lambda i: (records[i].first, i))
    sizes = [align_up(r.size, alignment) for r in records]
    offsets = place_in_order(records, sizes, order, best_fit=False)
    return make_plan(records, offsets, alignment, "first_fit")


@reference_for("memory_planning")
def greedy_by_size(
    records: Sequence[UsageRecord], *, alignment: int = DEFAULT_ALIGNMENT
) -> MemoryPlan:
    """Largest tensor first, each into the smallest gap that fits (best fit).

    This is the "greedy by size for offset calculation" strategy of TFLite's arena planner,
    from Pisarchyk & Lee, *Efficient Memory Management for Deep Neural Net Inference* (2020).
    Big tensors are hardest to fit, so they go first; small ones then fill the gaps left
    between them. If no gap between the overlapping tensors is large enough, the tensor goes on
    top of the highest one.
    """
    check_alignment(alignment)
    # Ties: earlier first use, then record order, so the plan is reproducible.
    order = sorted(range(len(records)), key=lambda i: (-records[i].size, records[i].first, i))
    sizes = [align_up(r.size, alignment) for r in records]
    offsets = place_in_order(records, sizes, order, best_fit=True)
    return make_plan(records, offsets, alignment, "greedy_by_size")


@reference_for("memory_planning")
def place_in_order(
    records: Sequence[UsageRecord], sizes: Sequence[int], order: Sequence[int], *, best_fit: bool
) -> list[int]:
    """Offsets (in record order) from placing ``records[i]`` for ``i`` in ``order``.

    Each tensor looks at the already placed tensors whose lifetimes overlap its own, sorted by
    offset, and at the gaps between them. ``best_fit`` picks the smallest gap that fits;
    otherwise the lowest one. With no fitting gap, the tensor goes above all of them.
    ``sizes`` are the aligned sizes; offsets stay aligned because they are sums of them.
    """
    neighbours = overlap_lists(records)
    offsets: list[int] = [-1] * len(records)
    for i in order:
        offsets[i] = _best_offset(i, neighbours[i], offsets, sizes, best_fit)
    return offsets


@reference_for("memory_planning")
def overlap_lists(records: Sequence[UsageRecord]) -> list[list[int]]:
    """For each record, the indices of the other records whose lifetimes overlap its own.

    A sweep over start times: each record only meets those still live when it starts.
    """
    result: list[list[int]] = [[] for _ in records]
    active: list[int] = []
    for i in sorted(range(len(records)), key=lambda k: records[k].first):
        active = [j for j in active if records[j].last > records[i].first]
        for j in active:
            result[i].append(j)
            result[j].append(i)
        active.append(i)
    return result


@reference_for("memory_planning")
def _best_offset(
    i: int, neighbours: list[int], offsets: list[int], sizes: Sequence[int], best_fit: bool
) -> int:
    size = sizes[i]
    taken = sorted((offsets[j], offsets[j] + sizes[j]) for j in neighbours if offsets[j] >= 0)
    best, best_gap, top = -1, -1, 0
    for lo, hi in taken:
        if hi == lo:
            continue  # an empty tensor blocks nothing
        gap = lo - top
        if gap >= size and (best < 0 or gap < best_gap):
            best, best_gap = top, gap
            if not best_fit:
                return best
        top = max(top, hi)
    return best if best >= 0 else top
