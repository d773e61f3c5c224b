"""Memory-planner benchmark: arena / lower bound per planner, on families we did and did not make.

Run from the repository root::

    .venv/bin/python benchmarks/planners.py                       # every built-in family
    .venv/bin/python benchmarks/planners.py --instances DIR       # plus every *.csv in DIR

Families: the activations of MobileNet v1/v2 (published tables); the activation records of
``chipsim.models`` (when that module exists: each model under its real schedule, and with the
reference fusion); packed guillotine tilings (our own generator, optimum = lower bound);
random intervals with heavy-tailed sizes; long-lived buffers beside short ones; 150-500
buffers with tight lifetimes; and, with ``--instances``, a public set such as MiniMalloc's
``benchmarks/challenging/*.csv`` (Moffitt, ASPLOS 2023; columns ``id,lower,upper,size``).
Get those with ``git clone https://github.com/google/minimalloc`` into a scratch folder outside
this repository and pass ``--instances <clone>/benchmarks/challenging``; never commit them.

Arena sizes of naive, first fit and greedy by size are deterministic; the search's depend on
its time limit (``--limits``, default 1 and 10 s) and so on the machine and its load. The
search's work units and its proven bound are printed beside it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from chipsim.passes.memory import (
    PLANNERS,
    UsageRecord,
    lower_bound,
    read_records_csv,
    validate_plan,
)
from chipsim.passes.memory.csv_io import decode_csv_bytes
from chipsim.passes.memory.instances import mobilenet_v1_records, mobilenet_v2_records
from chipsim.testing.memory_instances import (
    heavy_tailed_records,
    long_lived_records,
    packed_instance,
    tight_records,
)

run_search = importlib.import_module("chipsim.passes.memory.search").run_search

FIXED = ("naive", "first_fit", "greedy_by_size")
SIZES = (150, 300, 500)
SEEDS = (0, 1)

Family = list[tuple[str, Callable[[], list[UsageRecord]]]]


def builtin_families() -> dict[str, Family]:
    """Name -> [(instance label, maker)], every maker seeded."""
    grid = [(n, s) for n in SIZES for s in SEEDS]
    return {
        "mobilenet (published tables)": [
            ("mobilenet_v1", mobilenet_v1_records),
            ("mobilenet_v2", mobilenet_v2_records),
        ],
        "packed (ours, optimum = bound)": [
            (f"packed n={n} s={s}", lambda n=n, s=s: packed_instance(n, s))
            for n in (100, 200, 400)
            for s in SEEDS
        ],
        "heavy-tailed sizes": [
            (f"heavy n={n} s={s}", lambda n=n, s=s: heavy_tailed_records(n, s)) for n, s in grid
        ],
        "long-lived buffers": [
            (f"long n={n} s={s}", lambda n=n, s=s: long_lived_records(n, s)) for n, s in grid
        ],
        "tight lifetimes": [
            (f"tight n={n} s={s}", lambda n=n, s=s: tight_records(n, s)) for n, s in grid
        ],
    }


def model_family() -> Family:
    """Activation records of every model in ``chipsim.models`` (a hook: empty until it exists).

    Each network at its published size, once with one kernel per op (its own schedule) and
    once with the reference fusion, as :func:`chipsim.compile` hands them to the planner.
    """
    try:
        models = importlib.import_module("chipsim.models")
    except ImportError:
        return []
    family: Family = []
    for name in getattr(models, "NETWORKS", {}):
        build = getattr(models, name)
        for fusion, label in ((None, "one kernel per op"), ("reference", "fused")):
            family.append(
                (
                    f"{name} ({label})",
                    lambda b=build, f=fusion: models.activation_records(b(), fusion=f),
                )
            )
    return family


def csv_family(folder: Path) -> Family:
    files = sorted(folder.glob("*.csv"))
    if not files:
        sys.exit(f"error: no *.csv files in {folder}")
    return [
        (f.stem, lambda f=f: read_records_csv(decode_csv_bytes(f.read_bytes()), str(f)))
        for f in files
    ]


def measure(recs: list[UsageRecord], limits: list[float]) -> dict:
    """Arena / lower bound for each planner and each search limit, with the search's details."""
    lb = lower_bound(recs)
    row = {"n": len(recs), "bound": lb}
    for name in FIXED:
        row[name] = validate_plan(PLANNERS[name](recs)).arena_size / lb
    for limit in limits:
        start = time.perf_counter()
        result = run_search(recs, time_limit=limit)
        seconds = time.perf_counter() - start
        validate_plan(result.plan)
        row[f"search {limit:g}s"] = result.plan.arena_size / lb
        row[f"search {limit:g}s detail"] = (
            f"{seconds:.2f} s, {result.units:,} units, {result.stopped_by}"
            + (f", proved >= {result.bound / lb:.3f}" if result.bound > lb else "")
        )
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=Path, help="a folder of id,lower,upper,size CSVs")
    parser.add_argument("--limits", default="1,10", help="search time limits, seconds")
    parser.add_argument(
        "--only", help="run only the families whose name contains this (e.g. 'public')"
    )
    args = parser.parse_args(argv)
    limits = [float(x) for x in args.limits.split(",")]
    families = builtin_families()
    models = model_family()
    if models:
        families["published models (chipsim.models)"] = models
    if args.instances:
        families[f"public: {args.instances.name}"] = csv_family(args.instances)
    if args.only:
        families = {k: v for k, v in families.items() if args.only in k}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, load {load:.2f} at start; limits {limits} s\n")
    cols = [*FIXED, *(f"search {x:g}s" for x in limits)]
    summary = []
    for family, instances in families.items():
        print(f"### {family}\n")
        print(f"| instance | n | bound (B) | {' | '.join(cols)} | search details |")
        print("|---|---:|---:|" + "---:|" * len(cols) + "---|")
        rows = []
        for label, make in instances:
            row = measure(make(), limits)
            rows.append(row)
            cells = " | ".join(f"{row[c]:.3f}" for c in cols)
            detail = "; ".join(row[f"search {x:g}s detail"] for x in limits)
            print(f"| {label} | {row['n']} | {row['bound']:,} | {cells} | {detail} |", flush=True)
        summary.append((family, rows))
        print()
    _print_summary(summary, cols, limits)
    print(f"\nload at end: {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "")


def _print_summary(summary: list[tuple[str, list[dict]]], cols: list[str], limits) -> None:
    """Per family: mean ratios, and the targets: search never above greedy; on instances
    where greedy is over 1.2x the bound, search on average at least 8% below greedy."""
    searches = [f"search {x:g}s" for x in limits]
    print("### Summary (mean arena / lower bound per family)\n")
    print(
        f"| family | instances | {' | '.join(cols)} | worst search/greedy | "
        "mean search/greedy where greedy > 1.2x bound |"
    )
    print("|---|---:|" + "---:|" * len(cols) + "---:|---|")
    for family, rows in summary:
        means = " | ".join(f"{statistics.mean(r[c] for r in rows):.3f}" for c in cols)
        worst = max(r[s] / r["greedy_by_size"] for r in rows for s in searches)
        loose = [r for r in rows if r["greedy_by_size"] > 1.2]
        target = (
            ", ".join(
                f"{statistics.mean(r[s] / r['greedy_by_size'] for r in loose):.3f} ({s})"
                for s in searches
            )
            + f" over {len(loose)}"
            if loose
            else "none above 1.2x"
        )
        print(f"| {family} | {len(rows)} | {means} | {worst:.3f} | {target} |")


if __name__ == "__main__":
    main()
