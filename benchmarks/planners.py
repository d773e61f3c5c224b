"""Memory-planner benchmark: arena size of each planner against the lower bound / optimum.

Run: ``.venv/bin/python benchmarks/planners.py``. Arena sizes are deterministic; the times
are wall-clock seconds per instance on the machine that runs it (a benchmark, not a test).
"""

from __future__ import annotations

import time

from chipsim.passes.memory import PLANNERS, lower_bound, validate_plan
from chipsim.passes.memory.instances import (
    mobilenet_v1_records,
    mobilenet_v2_records,
    packed_instance,
)

NAMES = ("naive", "first_fit", "greedy_by_size", "search")


def main() -> None:
    instances = [("mobilenet_v1", mobilenet_v1_records()), ("mobilenet_v2", mobilenet_v2_records())]
    instances += [(f"packed n={n} seed={s}", packed_instance(n, s)) for n in (100, 200, 400)
                  for s in range(3)]  # fmt: skip
    print("arena / lower bound (for packed instances the lower bound is the optimum)")
    print(f"| instance | n | bound (B) | {' | '.join(NAMES)} | search s |")
    print("|---|---|---|" + "---|" * len(NAMES) + "---|")
    totals = {name: [] for name in NAMES}
    for label, recs in instances:
        lb = lower_bound(recs)
        cells, seconds = [], 0.0
        for name in NAMES:
            start = time.perf_counter()
            plan = validate_plan(PLANNERS[name](recs))
            seconds = time.perf_counter() - start
            ratio = plan.arena_size / lb
            if label.startswith("packed"):
                totals[name].append(ratio)
            cells.append(f"{ratio:.3f}")
        print(f"| {label} | {len(recs)} | {lb} | {' | '.join(cells)} | {seconds:.2f} |")
    means = " | ".join(f"{sum(v) / len(v):.3f}" for v in totals.values())
    print(f"| mean of packed | | | {means} | |")


if __name__ == "__main__":
    main()
