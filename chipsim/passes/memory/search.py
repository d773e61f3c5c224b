"""The search planner: an anytime search for a smaller arena, within a time limit.

Greedy by size places each tensor once, in one order, and never looks back. The search keeps
greedy's plan as its first answer and then asks, again and again, a yes-or-no question: *is
there a plan whose arena is at most* ``cap``? Each question is a depth-first search over
"canonical" plans, the ones built bottom-up with every tensor resting on another
(:mod:`.search_canonical`, after Moffitt's MiniMalloc, ASPLOS 2023), in which the lower bound
cuts off every branch that can no longer fit under the cap. A *yes* is a better plan; a
complete *no* proves the cap too small and raises the lower bound; a question that runs out of
nodes is asked again later with twice the nodes. Each round of questions first asks for the
bound itself, so a tight instance is solved, and proved optimal, as soon as the search finds a
plan with no hole; then it steps down from the best plan, by larger steps after a *yes* and
smaller ones after a *no*. Before the questions, greedy placements in a few other orders offer
cheap improvements. Nothing in the search looks at how an instance was made: it sees the sizes
and lifetimes of the tensors, nothing else.

Determinism: the search does the same work in the same order for the same records, alignment
and seed; ``effort`` counts that work in units (one per search node or placement). If the
effort runs out first, the plan is the same on every machine. If the time limit stops it first,
the plan is the best found by then: never worse than greedy by size, never worse with more
time, but possibly a better one on a faster (or less busy) machine. For plans that must not
depend on the machine, pass ``effort`` and a time limit generous enough never to bind.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> recs = [UsageRecord("a", 128, 3, 4), UsageRecord("b", 128, 1, 4),
    ...         UsageRecord("c", 128, 3, 4), UsageRecord("d", 128, 2, 3),
    ...         UsageRecord("e", 192, 0, 2)]
    >>> greedy_by_size(recs).arena_size, search(recs, time_limit=1.0).arena_size
    (448, 384)
    >>> run_search(recs, time_limit=1.0).stopped_by  # 384 B is the lower bound
    'optimal'
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chipsim.errors import PlanError
from chipsim.i18n import tr
from chipsim.passes.memory.liveness import DEFAULT_ALIGNMENT, UsageRecord, check_alignment
from chipsim.passes.memory.plan import MemoryPlan, make_plan
from chipsim.passes.memory.planners import greedy_by_size
from chipsim.passes.memory.search_canonical import FOUND, INFEASIBLE, fit_under
from chipsim.passes.memory.search_problem import Effort, Instance

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("memory_planning",)

#: Default wall-clock limit of :func:`search`, in seconds.
DEFAULT_TIME_LIMIT = 10.0

#: The question at the bound itself gets this many times the nodes of the other caps: it is
#: the one that solves tight instances outright.
EXACT_SHARE = 4

#: A round's first step down from the best arena (1/STEP0 of it) and its smallest step.
STEP0, RESOLUTION = 100, 1000


@dataclass(frozen=True)
class SearchResult:
    """What :func:`run_search` found, and why it stopped.

    Attributes:
        plan: the best plan found (validated by the caller, like every plan).
        bound: a proven lower bound on the arena: the peak of live bytes, or more when the
            search proved that no plan fits under a larger cap.
        stopped_by: ``"optimal"`` (the plan meets the bound), ``"time limit"`` or ``"effort"``.
        units: work units spent (search nodes and placements).
        seconds: wall time spent.
        history: ``(units, arena, bound)`` each time the best plan or the bound improved; the
            anytime curve of the search.
    """

    plan: MemoryPlan
    bound: int
    stopped_by: str
    units: int
    seconds: float
    history: tuple[tuple[int, int, int], ...]


def search(
    records: Sequence[UsageRecord],
    *,
    alignment: int = DEFAULT_ALIGNMENT,
    seed: int = 0,
    time_limit: float = DEFAULT_TIME_LIMIT,
    effort: int | None = None,
) -> MemoryPlan:
    """The best plan an anytime search finds within ``time_limit``; never worse than greedy.

    Args:
        records: the tensors to place.
        alignment: offsets are multiples of it and sizes are rounded up to it.
        seed: seeds the search's later, randomised preferences (same seed, same work).
        time_limit: seconds after which the best plan so far is returned (default 10). The
            search returns earlier when it proves its plan optimal. Greedy by size always runs
            to the end first (about a second for 1,000 tensors that are all live together),
            so a shorter limit is exceeded by that much.
        effort: optional budget in work units; with it, the plan no longer depends on the
            machine as long as the time limit does not bind (see the module docstring).

    Raises:
        PlanError: a bad alignment, time limit or effort.
    """
    return run_search(
        records, alignment=alignment, seed=seed, time_limit=time_limit, effort=effort
    ).plan


def run_search(
    records: Sequence[UsageRecord],
    *,
    alignment: int = DEFAULT_ALIGNMENT,
    seed: int = 0,
    time_limit: float = DEFAULT_TIME_LIMIT,
    effort: int | None = None,
) -> SearchResult:
    """Like :func:`search`, and also say how the search went (:class:`SearchResult`)."""
    check_alignment(alignment)
    _check_limits(time_limit, effort)
    budget = Effort(time_limit, effort)
    records = list(records)
    # The start, always completed: the promise never to be worse than greedy by size.
    greedy = greedy_by_size(records, alignment=alignment)
    best = _Best([greedy.offsets[r.id] for r in records], greedy.arena_size)
    best.bound = greedy.lower_bound
    best.note(budget)
    if best.arena > best.bound and not budget.past_deadline():
        inst = Instance(records, alignment)
        _try_orders(inst, best, budget)
        _descend(inst, best, budget, random.Random(seed))
    if best.arena <= best.bound:
        stopped_by = "optimal"
    else:
        stopped_by = "time limit" if budget.out_of_time else "effort"
    return SearchResult(
        make_plan(records, best.offsets, alignment, "search"),
        best.bound,
        stopped_by,
        budget.used,
        budget.seconds(),
        tuple(best.history),
    )


def _check_limits(time_limit: float, effort: int | None) -> None:
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, (int, float))
        or not (time_limit > 0)
    ):
        raise PlanError(tr("time_limit must be a positive number of seconds, got {value!r}",
                           value=time_limit))  # fmt: skip
    if effort is not None and (
        isinstance(effort, bool) or not isinstance(effort, int) or effort < 0
    ):
        raise PlanError(tr("effort must be None or a number of work units >= 0, got {value!r}",
                           value=effort))  # fmt: skip


class _Best:
    """The best plan so far, the best proven bound, and the history of both."""

    def __init__(self, offsets: list[int], arena: int) -> None:
        self.offsets, self.arena, self.bound = offsets, arena, 0
        self.history: list[tuple[int, int, int]] = []

    def offer(self, inst: Instance, offsets: list[int] | None, budget: Effort) -> None:
        if offsets is not None and inst.arena(offsets) < self.arena:
            self.offsets, self.arena = offsets, inst.arena(offsets)
            self.note(budget)

    def raise_bound(self, bound: int, budget: Effort) -> None:
        if bound > self.bound:
            self.bound = bound
            self.note(budget)

    def note(self, budget: Effort) -> None:
        self.history.append((budget.used, self.arena, self.bound))


def _try_orders(inst: Instance, best: _Best, budget: Effort) -> None:
    """Greedy placements in other orders, best fit and first fit (cheap, often good).

    Orders by size, by lifetime and by area (size x lifetime) are the classic ones for this
    problem (Sekiyama et al., *Profile-guided memory optimization for deep neural networks*,
    2018; Pisarchyk & Lee 2020 for size); greedy by size already tried the first.
    """
    length = [r.last - r.first for r in inst.records]
    size = inst.sizes
    keys: list[Callable[[int], tuple]] = [
        lambda i: (-length[i], -size[i], i),
        lambda i: (-size[i] * length[i], i),
        lambda i: (-_peak_of(inst, i), -size[i], i),
    ]
    for key in keys:
        order = sorted(range(len(inst)), key=key)
        for best_fit in (True, False):
            best.offer(inst, inst.place(order, best_fit, budget), budget)


def _peak_of(inst: Instance, i: int) -> int:
    """The most bytes live in any section of tensor ``i``'s lifetime."""
    a, b = inst.spans[i]
    return max(inst.section_bytes[a:b], default=0)


def _ranks(inst: Instance) -> list[list[int]]:
    """The search's fixed preferences between tensors with the same floor.

    MiniMalloc's three: longest lifetime first, largest area (size x lifetime) first, and
    busiest section first (the most bytes live anywhere in the lifetime), each with the others
    as tie-breakers.
    """
    n = len(inst)
    length = [r.last - r.first for r in inst.records]
    area = [inst.sizes[i] * length[i] for i in range(n)]
    peak = [_peak_of(inst, i) for i in range(n)]
    keys: list[Callable[[int], tuple]] = [
        lambda i: (-length[i], -area[i], -peak[i], i),
        lambda i: (-peak[i], -area[i], -length[i], i),
        lambda i: (-peak[i], -length[i], -area[i], i),
    ]
    return [_as_rank(sorted(range(n), key=key)) for key in keys]


def _as_rank(order: Sequence[int]) -> list[int]:
    rank = [0] * len(order)
    for position, i in enumerate(order):
        rank[i] = position
    return rank


def _shuffled_rank(rank: list[int], rng: random.Random) -> list[int]:
    """``rank`` with each tensor moved a random distance (a fresh preference, same spirit)."""
    n = len(rank)
    noisy = [rank[i] + rng.random() * n / 4 for i in range(n)]
    return _as_rank(sorted(range(n), key=lambda i: (noisy[i], i)))


def _descend(inst: Instance, best: _Best, budget: Effort, rng: random.Random) -> None:
    """Ask "a plan under ``cap``?" for caps between the bound and the best arena.

    Each round uses one preference and a node limit per question; after a round of every
    fixed preference and a seeded random one, the limit doubles (as MiniMalloc's restarts).
    A round first asks for the bound itself (the first round briefly, so that easy gains come
    early; later ones with ``EXACT_SHARE`` times the nodes), then steps down from the best
    arena: a *yes* (cheap: the search dives straight to a plan) doubles the step, a *no*
    (costly: the node limit runs out) halves it, and the round ends when the step is below
    1/1000 of the arena.
    """
    fixed = _ranks(inst)
    align = inst.alignment
    base = max(64, 2 * len(inst))
    level = 0
    while best.arena > best.bound and not budget.spent:
        k = level % (len(fixed) + 1)
        rank = fixed[k] if k < len(fixed) else _shuffled_rank(fixed[level % len(fixed)], rng)
        limit = base << (level // (len(fixed) + 1))
        _ask(inst, best, budget, best.bound, rank, limit * (EXACT_SHARE if level else 1))
        failed = best.bound  # the highest cap that failed in this round
        step = _aligned(best.arena // STEP0, align)
        while best.arena > best.bound and not budget.spent:
            if step < max(align, best.arena // RESOLUTION):
                break
            cap = max(best.arena - step, failed + (best.arena - failed) // 2)
            cap = _aligned(cap, align)
            if cap <= failed or cap >= best.arena:
                break
            if _ask(inst, best, budget, cap, rank, limit):
                step *= 2
            else:
                failed, step = cap, _aligned(step // 2, align)
        level += 1


def _ask(
    inst: Instance, best: _Best, budget: Effort, cap: int, rank: list[int], limit: int
) -> bool:
    """One question; record its answer in ``best``. True for a plan under ``cap``."""
    status, offsets = fit_under(inst, cap, rank, budget, limit)
    if status == FOUND:
        best.offer(inst, offsets, budget)
    elif status == INFEASIBLE:
        best.raise_bound(cap + inst.alignment, budget)
    return status == FOUND


def _aligned(n: int, align: int) -> int:
    return n // align * align
