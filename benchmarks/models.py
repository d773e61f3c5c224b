"""Benchmark: the published models (``chipsim.models``) on every chip preset.

For each model at its published size and each preset: eager (one kernel per op) vs compiled
cycles (compiled with batch norm folded), kernels, DRAM bytes, the memory plan's arena against
its lower bound, the biggest kernel's position on the roofline, and the wall time to compile
and to simulate (timing only). The measurement is :func:`chipsim.models.measure`, which the
book's models page also uses.

    .venv/bin/python benchmarks/models.py [--only NAME] [--chips a,b] [--no-eager] [--profile]

The models hold their weights in f32 (GPT-2 small: 475 MiB), more than ``edge-npu``'s 64 MiB
of DRAM: a model whose weights do not fit is compiled for the preset with its DRAM raised to
4 GiB, and the table says so ("DRAM x64"). Cycles and bytes are deterministic; wall times
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats

import chipsim as cs
import chipsim.models as models
from chipsim.models.measure import BIG_DRAM


def line(name: str, chip: str, r: models.ModelRun) -> str:
    where = chip + (
        f" (DRAM x{BIG_DRAM // cs.chip(chip).dram.capacity_bytes})" if r.dram_raised else ""
    )
    eager = f"{r.eager_cycles:,}" if r.eager_cycles is not None else "out of DRAM"
    speed = f"{r.speedup:.2f}x" if r.speedup is not None else "-"
    big = r.biggest[0]
    short = big.name if len(big.name) <= 40 else big.name[:37] + "..."
    bound = "compute" if big.intensity >= r.ridge else "memory"
    return (
        f"| {name} | {where} | {eager} | {r.cycles:,} | {speed} | {r.eager_kernels or '-'} -> "
        f"{r.kernels} | {r.dram_bytes:,} | {r.arena / max(r.lower_bound, 1):.3f} | {short}: "
        f"{big.intensity:.0f} FLOP/B ({bound}-bound, ridge {r.ridge:.0f}) | "
        f"{r.compile_s:.2f} | {r.simulate_s:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="models whose name contains this")
    parser.add_argument("--chips", default=",".join(cs.chips()))
    parser.add_argument("--no-eager", action="store_true", help="skip the eager runs")
    parser.add_argument("--profile", action="store_true", help="cProfile compile + simulate")
    args = parser.parse_args()
    cores, load = os.cpu_count(), os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {cores} cores, load {load:.1f}")
    print(
        "| model | chip | eager cycles | compiled cycles | speedup | kernels eager -> compiled |"
        " DRAM bytes | arena / lower bound | biggest kernel | compile s | simulate s |"
    )
    print("|---|---|---:|---:|---:|---|---:|---:|---|---:|---:|")
    for name in models.MODELS:
        if args.only not in name:
            continue
        graph = models.build(name)
        for chip in args.chips.split(","):
            prof = cProfile.Profile() if args.profile else None
            if prof:
                prof.enable()
            run = models.measure(graph, chip, eager=not args.no_eager)
            if prof:
                prof.disable()
            print(line(name, chip, run), flush=True)
            if prof:
                pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
