"""The planner registry: look planners up by name (for the CLI, the grader and notebooks).

Example:
    >>> sorted(PLANNERS)
    ['first_fit', 'greedy_by_size', 'naive', 'search']
    >>> get_planner("greedy_by_size").__name__
    'greedy_by_size'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chipsim.errors import PlanError
from chipsim.i18n import listing, tr
from chipsim.passes.memory.liveness import UsageRecord
from chipsim.passes.memory.plan import MemoryPlan
from chipsim.passes.memory.planners import first_fit, greedy_by_size, naive
from chipsim.passes.memory.search import search

Planner = Callable[..., MemoryPlan]

PLANNERS: dict[str, Planner] = {
    "naive": naive,
    "first_fit": first_fit,
    "greedy_by_size": greedy_by_size,
    "search": search,
}


def get_planner(name_or_callable: str | Planner) -> Planner:
    """A planner by name (``"first-fit"`` and ``"first_fit"`` both work), or the callable given.

    Raises:
        PlanError: unknown name; the message lists the known ones.
    """
    if callable(name_or_callable):
        return name_or_callable
    key = str(name_or_callable).strip().lower().replace("-", "_")
    if key not in PLANNERS:
        raise PlanError(tr("unknown memory planner {name!r}; choose one of {known} or pass your "
                           "own function plan(records, *, alignment)", name=name_or_callable,
                           known=listing(PLANNERS)))  # fmt: skip
    return PLANNERS[key]


def plan_memory(
    records: Sequence[UsageRecord], strategy: str | Planner = "greedy_by_size", **kwargs
) -> MemoryPlan:
    """Run the planner ``strategy`` on ``records`` (keyword arguments go to the planner)."""
    return get_planner(strategy)(records, **kwargs)
