"""Static memory planning: liveness, planners, the lower bound and the plan validator.

Lifetimes are half-open ``[first, last)`` everywhere (see :mod:`.liveness`).

Example:
    >>> from chipsim.passes.memory import UsageRecord, greedy_by_size, validate_plan
    >>> recs = [UsageRecord("a", 4096, 0, 2), UsageRecord("b", 4096, 1, 3),
    ...         UsageRecord("c", 4096, 2, 4)]
    >>> plan = validate_plan(greedy_by_size(recs))
    >>> plan.offsets, plan.arena_size, plan.lower_bound
    ({'a': 0, 'b': 4096, 'c': 0}, 8192, 8192)
"""

from chipsim.passes.memory.bounds import live_bytes, lower_bound
from chipsim.passes.memory.csv_io import read_records_csv, write_plan_csv, write_records_csv
from chipsim.passes.memory.liveness import (
    DEFAULT_ALIGNMENT,
    INTERVAL_CONVENTION,
    UsageRecord,
    align_up,
    liveness,
    records_from_uses,
)
from chipsim.passes.memory.plan import MemoryPlan, format_bytes
from chipsim.passes.memory.planners import first_fit, greedy_by_size, naive
from chipsim.passes.memory.registry import PLANNERS, get_planner, plan_memory
from chipsim.passes.memory.search import SearchResult, run_search, search
from chipsim.passes.memory.validate import validate_plan

__all__ = [
    "DEFAULT_ALIGNMENT", "INTERVAL_CONVENTION", "MemoryPlan", "PLANNERS", "SearchResult",
    "UsageRecord",
    "align_up", "first_fit", "format_bytes", "get_planner", "greedy_by_size", "live_bytes",
    "liveness", "lower_bound", "naive", "plan_memory", "read_records_csv", "records_from_uses",
    "run_search", "search", "validate_plan", "write_plan_csv", "write_records_csv",
]  # fmt: skip
