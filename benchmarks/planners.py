"""Memory-planner benchmark: arena size of each planner against the lower bound / optimum.

Run: ``.venv/bin/python benchmarks/planners.py``. Arena sizes are deterministic; the times
are wall-clock seconds per instance on the machine that runs it (a benchmark, not a test).

``.venv/bin/python benchmarks/planners.py --sweep 40`` adds a summary over packed instances
n = 100/200/400 with seeds ``0..39``: how often ``search`` reaches the optimum, how often the
guillotine recovery alone finds it, and the slowest search.
"""

from __future__ import annotations

import sys
import time

from chipsim.passes.memory import PLANNERS, lower_bound, validate_plan
from chipsim.passes.memory.instances import (
    mobilenet_v1_records,
    mobilenet_v2_records,
    packed_instance,
)
from chipsim.passes.memory.search_guillotine import pack_guillotine

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


def sweep(seeds: int) -> None:
    """Search and guillotine recovery on packed instances n = 100/200/400, seeds 0..seeds-1."""
    optimal = recovered = total = 0
    worst, worst_label, greedy, ratios = 0.0, "", [], []
    for n in (100, 200, 400):
        for s in range(seeds):
            recs = packed_instance(n, s)
            lb = lower_bound(recs)
            # quantum 64 = default alignment, so the sizes need no rounding here
            spans = ([r.first for r in recs], [r.last for r in recs], [r.size for r in recs])
            found = pack_guillotine(*spans)
            recovered += found is not None
            start = time.perf_counter()
            plan = validate_plan(PLANNERS["search"](recs))
            seconds = time.perf_counter() - start
            if seconds > worst:
                worst, worst_label = seconds, f"n={n} seed={s}"
            optimal += plan.arena_size == lb
            ratios.append(plan.arena_size / lb)
            greedy.append(validate_plan(PLANNERS["greedy_by_size"](recs)).arena_size / lb)
            total += 1
    print(f"\nsweep: packed n = 100/200/400 x seeds 0..{seeds - 1} ({total} instances)")
    print(
        f"search optimal: {optimal}/{total} (worst ratio {max(ratios):.3f}); "
        f"guillotine recovery alone: {recovered}/{total}"
    )
    print(f"slowest search: {worst:.2f} s ({worst_label})")
    print(f"greedy_by_size mean ratio: {sum(greedy) / len(greedy):.3f}, worst {max(greedy):.3f}")


if __name__ == "__main__":
    main()
    if len(sys.argv) > 2 and sys.argv[1] == "--sweep":
        sweep(int(sys.argv[2]))
