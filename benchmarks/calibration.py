"""How far chipsim's times are from measured hardware (issues 13 and 16).

1. ``datacenter-gpu`` as it is vs the 84 published A100 per-op measurements (LLMCompass,
   ISCA 2024; ``chipsim/calibration/a100_measured.csv``), fit and held-out rows apart.
2. The best the preset's *structure* can do: three fields (eager launch, tensor-core count,
   DRAM/DMA bandwidth) fitted to the fit rows, then scored on the held-out rows.
3. The same fit per op class (one launch, bandwidth and tensor rate per class): roughly
   what a per-kernel-kind host dispatch cost would reach without the other stage-2 parts.
4. ``cpu-simd`` fitted to this machine (``python -m chipsim calibrate``), its held-out error.

Usage: ``.venv/bin/python benchmarks/calibration.py [--skip-cpu] [--rows]``
"""

from __future__ import annotations

import argparse
import os
import time

from chipsim.calibration import Param, evaluate, fit_chip, load_measurements, split
from chipsim.calibration.host import calibrate_host
from chipsim.calibration.host_timing import machine_description, measure_host

GPU_PARAMS = (
    Param(("launch.eager_cycles",), 1_000, 200_000),
    Param(("tensor_core.count",), 100, 4_000),
    Param(("dram.bytes_per_cycle", "dma.bytes_per_cycle"), 100, 4_000),
)


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
    parser.add_argument("--rows", action="store_true", help="print every A100 row")
    args = parser.parse_args()
    print(f"machine: {machine_description()}; load {os.getloadavg()[0]:.2f}")
    rows = load_measurements()

    t = time.perf_counter()
    base = evaluate("datacenter-gpu", rows)
    print(f"\n== 1. datacenter-gpu as it is ({time.perf_counter() - t:.1f} s)")
    if args.rows:
        print(base.row_table())
    print(base.summary_table())
    _line("datacenter-gpu", base)

    t = time.perf_counter()
    fit = fit_chip("datacenter-gpu", GPU_PARAMS, split(rows, "fit"))
    fitted = evaluate(fit.chip, rows)
    print(f"\n== 2. three fields fitted to the fit rows ({time.perf_counter() - t:.1f} s)")
    print(f"values {fit.values}, loss {fit.loss:.4f}, {fit.evaluations} points")
    print(fitted.summary_table())
    _line("fitted preset", fitted)

    print("\n== 3. the same three fields fitted per op class")
    for op in base.ops:
        t = time.perf_counter()
        cls = [r for r in rows if r.op == op]
        res = fit_chip("datacenter-gpu", GPU_PARAMS, split(cls, "fit"))
        ev = evaluate(res.chip, cls)
        sm = ev.summary("heldout")
        print(
            f"{op:10} held-out MAPE {sm.mape:6.1%} geomean {sm.geomean:.2f}x worst {sm.worst:6.1%}"
            f"  launch {res.values['launch.eager_cycles'] / res.chip.clock_hz * 1e6:.1f} us,"
            f" tensor {res.values['tensor_core.count']}, dram {res.values['dram.bytes_per_cycle']}"
            f" B/cycle ({time.perf_counter() - t:.1f} s)"
        )

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


if __name__ == "__main__":
    main()
