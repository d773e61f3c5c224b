"""The plan validator: proves a memory plan safe, or names the two tensors that collide.

A sweep over time keeps the live tensors sorted by offset. Live tensors never overlap each
other (that is what we check as we go), so a tensor that starts at step ``t`` can only collide
with its two neighbours in address order; checking them is enough. This costs
O(n log n + n * live) instead of comparing all n^2 pairs.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> from chipsim.passes.memory.plan import MemoryPlan
    >>> recs = (UsageRecord("a", 4096, 3, 6), UsageRecord("b", 8192, 5, 7))
    >>> validate_plan(MemoryPlan(recs, {"a": 4096, "b": 0}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    chipsim.errors.PlanError: tensors 'a' and 'b' overlap at bytes [4096, 8192) while both live ...
"""

from __future__ import annotations

from bisect import bisect_left, insort

from chipsim.errors import PlanError
from chipsim.i18n import tr
from chipsim.passes.memory.liveness import UsageRecord, align_up, check_alignment
from chipsim.passes.memory.plan import MemoryPlan


def validate_plan(plan: MemoryPlan) -> MemoryPlan:
    """Check ``plan`` and return it unchanged, or raise :class:`PlanError` saying what is wrong.

    Checks: every tensor has exactly one offset and no offset names an unknown tensor; offsets
    are non-negative ints and multiples of ``plan.alignment``; no two tensors that are live at
    the same step share a byte (sizes rounded up to the alignment).
    """
    alignment = check_alignment(plan.alignment)
    _check_ids(plan)
    for r in plan.records:
        off = plan.offsets[r.id]
        if not isinstance(off, int) or isinstance(off, bool):
            raise PlanError(tr("tensor {id!r}: offset must be an int, got {offset!r}",
                               id=r.id, offset=off))  # fmt: skip
        if off < 0:
            raise PlanError(tr("tensor {id!r}: offset {offset} is negative; offsets start at 0",
                               id=r.id, offset=off))  # fmt: skip
        if off % alignment:
            raise PlanError(tr(
                "tensor {id!r}: offset {offset} is not a multiple of the alignment "
                "{alignment}; round it up to {up}",
                id=r.id, offset=off, alignment=alignment, up=align_up(off, alignment),
            ))  # fmt: skip
    _check_overlaps(plan.records, plan.offsets, alignment)
    return plan


def _check_ids(plan: MemoryPlan) -> None:
    seen: set[str] = set()
    for r in plan.records:
        if r.id in seen:
            raise PlanError(tr("tensor id {id!r} appears twice in the plan; ids must be unique",
                               id=r.id))  # fmt: skip
        seen.add(r.id)
        if r.id not in plan.offsets:
            raise PlanError(tr("tensor {id!r} has no offset; the planner must place every tensor",
                               id=r.id))  # fmt: skip
    for key in plan.offsets:
        if key not in seen:
            raise PlanError(tr("the plan gives an offset to unknown tensor {id!r}; drop that "
                               "offset", id=key))  # fmt: skip


def _check_overlaps(records: tuple[UsageRecord, ...], offsets, alignment: int) -> None:
    # Tensors that end at step t are freed before those born at t are placed: half-open lives.
    by_start = sorted(range(len(records)), key=lambda i: (records[i].first, i))
    live: list[tuple[int, int, int]] = []  # (offset, end, index), sorted by offset
    for i in by_start:
        r = records[i]
        live = [e for e in live if records[e[2]].last > r.first]
        lo = offsets[r.id]
        hi = lo + align_up(r.size, alignment)
        if hi == lo:
            continue  # an empty tensor occupies no bytes
        pos = bisect_left(live, (lo, hi, i))
        for k in (pos - 1, pos):
            if 0 <= k < len(live):
                o_lo, o_hi, j = live[k]
                if o_lo < hi and lo < o_hi:
                    raise PlanError(tr(
                        "tensors {a!r} and {b!r} overlap at bytes [{lo}, {hi}) while both live "
                        "at step {t}: give one of them an offset clear of the other",
                        a=records[j].id, b=r.id, lo=max(lo, o_lo), hi=min(hi, o_hi), t=r.first,
                    ))  # fmt: skip
        insort(live, (lo, hi, i))
