"""How far chipsim's times are from measured hardware (issues 13 and 16).

1. ``datacenter-gpu`` as shipped vs the 84 published A100 per-op measurements (LLMCompass,
   ISCA 2024; ``chipsim/calibration/a100_measured.csv``), fit and held-out rows apart.
2. What each part of the GPU model buys: the preset with one part taken out at a time.
3. The fit itself, reproduced: the eight fitted fields started from published priors
   (LLMCompass's own A100 overheads, peak rates) and fitted on the fit rows only, for each
   per-block row budget tried; the preset ships the best.
4. Leave-one-source-out (issue 25, ``--loso``): every row of the multi-source corpus simulated
   on the parameter grid (``chipsim.calibration.loso``), each source predicted by the point
   chosen on the others; writes ``chipsim/calibration/loso_results.json`` (the book replays it).
5. ``cpu-simd`` fitted to this machine (``python -m chipsim calibrate``), its held-out error.

Usage: ``.venv/bin/python benchmarks/calibration.py [--skip-cpu] [--skip-fit] [--rows]
[--budgets 4096 ...] [--loso [--grid-cache FILE]]``
"""

from __future__ import annotations

import argparse
import os
import time

import chipsim
from chipsim.calibration import evaluate, fit_chip, load_measurements, split
from chipsim.calibration.ablation import ABLATIONS, GPU_FIT_PARAMS, GPU_PRIORS, ROW_BUDGETS
from chipsim.calibration.fit import with_fields
from chipsim.calibration.host import calibrate_host
from chipsim.calibration.host_timing import machine_description, measure_host


def _line(title: str, ev) -> None:
    held = ev.summary("heldout")
    classes = ", ".join(
        f"{op} {ev.summary('heldout', op).geomean:.2f}x"
        for op in ev.ops
        if ev.select("heldout", op)
    )
    print(f"{title}: held-out MAPE {held.mape:.1%} (fit {ev.summary('fit').mape:.1%}); {classes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-cpu", action="store_true", help="only the A100 part")
    parser.add_argument("--skip-fit", action="store_true", help="do not rerun the GPU fit")
    parser.add_argument("--rows", action="store_true", help="print every A100 row")
    parser.add_argument(
        "--budgets",
        type=int,
        nargs="+",
        default=list(ROW_BUDGETS),
        help="per-block row budgets (bytes) to fit with (default: all of ROW_BUDGETS)",
    )
    parser.add_argument("--loso", action="store_true", help="leave-one-source-out (slow)")
    parser.add_argument("--grid-cache", help="JSON of grid times to reuse and write")
    parser.add_argument("--only-loso", action="store_true", help="only section 4")
    args = parser.parse_args()
    print(f"machine: {machine_description()}; load {os.getloadavg()[0]:.2f}")
    rows = load_measurements()
    if args.only_loso:
        _loso(args.grid_cache)
        return

    t = time.perf_counter()
    base = evaluate("datacenter-gpu", rows)
    print(f"\n== 1. datacenter-gpu as shipped ({time.perf_counter() - t:.1f} s)")
    if args.rows:
        print(base.row_table())
    print(base.summary_table())
    _line("datacenter-gpu", base)

    print("\n== 2. one part of the model taken out at a time")
    gpu = chipsim.chip("datacenter-gpu")
    for name, fields in ABLATIONS.items():
        _line(f"{name:44}", evaluate(with_fields(gpu, fields(gpu)), rows))

    if not args.skip_fit:
        print("\n== 3. the fit, from published priors, on the fit rows only")
        for budget in args.budgets:
            t = time.perf_counter()
            start = with_fields(gpu, {**GPU_PRIORS, "sm.row_budget_bytes": budget})
            fit = fit_chip(start, GPU_FIT_PARAMS, split(rows, "fit"))
            print(
                f"row budget {budget} B: {fit.values}, loss {fit.loss:.4f}, "
                f"{fit.evaluations} points ({time.perf_counter() - t:.0f} s)"
            )
            _line(f"  fitted, row budget {budget} B", evaluate(fit.chip, rows))

    if args.loso:
        _loso(args.grid_cache)

    if args.skip_cpu:
        return
    t = time.perf_counter()
    host_rows = measure_host()
    cal = calibrate_host(host_rows)
    print(f"\n== 4. cpu-simd fitted to this machine ({time.perf_counter() - t:.1f} s)")
    print(f"fitted {cal.fit.values}")
    print(cal.evaluation.row_table())
    print(cal.evaluation.summary_table())
    _line("this-cpu", cal.evaluation)


def _loso(cache: str | None) -> None:
    import json
    from pathlib import Path

    from chipsim.calibration import load_corpus, loso
    from chipsim.calibration.evaluate import Summary

    rows = load_corpus()
    print(
        f"\n== 4. leave one source out: {len(rows)} rows, {len({r.source for r in rows})} sources"
    )
    t = time.perf_counter()
    old = json.loads(Path(cache).read_text()) if cache and Path(cache).exists() else None
    times = loso.grid_times(rows, progress=lambda s: print(f"  grid {s}", flush=True), reuse=old)
    if cache:
        Path(cache).write_text(json.dumps(times))
    print(f"grid: {len(times)} points ({time.perf_counter() - t:.0f} s)")
    folds = loso.leave_one_source_out(rows, times)
    every, loss = loso.choose(times, rows)
    print(f"all sources: {dict(every)}, loss {loss:.4f}")
    held = []
    for f in folds:
        s = f.summary
        held.extend(f.results)
        print(
            f"{f.source:13} rows {s.rows:3d} (+{len(f.probes)} probes)  MAPE {s.mape:6.1%}  "
            f"geomean {s.geomean:5.2f}  worst {s.worst:6.1%}  chosen {dict(f.point)}"
        )
    total = Summary.of(held)
    print(
        f"{'overall':13} rows {total.rows:3d}  MAPE {total.mape:6.1%}  geomean {total.geomean:5.2f}"
    )
    for op in dict.fromkeys(r.row.op for r in held):
        s = Summary.of([r for r in held if r.row.op == op])
        print(f"  class {op:14} rows {s.rows:3d}  MAPE {s.mape:6.1%}  geomean {s.geomean:5.2f}")
    loso.save_folds(folds, every)
    print(f"wrote {loso.RESULTS_JSON}")


if __name__ == "__main__":
    main()
