"""Benchmark: the published models (``chipsim.models``) on every chip preset.

For each model at its published size and each preset: eager (one kernel per op) vs compiled
cycles (compiled with batch norm folded), kernels, DRAM bytes, the memory plan's arena against
its lower bound, the biggest kernel's position on the roofline, and the wall time to compile
and to simulate (timing only).

    .venv/bin/python benchmarks/models.py [--only NAME] [--chips a,b] [--no-eager] [--profile]

The models hold their weights in f32 (GPT-2 small: 475 MiB), more than ``edge-npu``'s 64 MiB
of DRAM: a model whose weights do not fit is compiled for the preset with its DRAM raised to
4 GiB, and the table says so ("DRAM x"). Cycles and bytes are deterministic; wall times
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import os
import platform
import pstats
import time

import numpy as np

import chipsim as cs
import chipsim.models as models
from chipsim.errors import OutOfMemoryError
from chipsim.passes.fold_batchnorm import fold_batchnorm
from chipsim.workloads.eager import run_eager

BIG_DRAM = 4 * 2**30


def with_dram(chip: cs.Chip, capacity: int) -> cs.Chip:
    return dataclasses.replace(chip, dram=dataclasses.replace(chip.dram, capacity_bytes=capacity))


def compile_timed(graph: cs.Graph, chip: cs.Chip):
    t = time.perf_counter()
    program = cs.compile(graph, chip=chip)
    compile_s = time.perf_counter() - t
    zeros = [np.zeros(v.shape, v.dtype.numpy) for v in program.graph.inputs]
    t = time.perf_counter()
    _, report = program.run(*zeros, functional=False)
    return program, report, compile_s, time.perf_counter() - t


def row(name: str, graph: cs.Graph, chip_name: str, eager: bool) -> dict:
    """Compiled: batch norm folded into the convolutions, as inference compilers do; eager:
    the graph as written, one kernel per op (as a framework's eager mode runs it)."""
    chip, note = cs.chip(chip_name), ""
    inference = fold_batchnorm(graph)
    try:
        program, report, compile_s, sim_s = compile_timed(inference, chip)
    except OutOfMemoryError:
        chip, note = with_dram(chip, BIG_DRAM), f"DRAM x{BIG_DRAM // chip.dram.capacity_bytes}"
        program, report, compile_s, sim_s = compile_timed(inference, chip)
    out = {
        "model": name,
        "chip": chip_name + (f" ({note})" if note else ""),
        "compiled": report.cycles,
        "kernels": len(program.kernels),
        "dram": report.bytes_moved["dram"],
        "arena": program.plan.arena_size,
        "bound": program.plan.lower_bound,
        "compile_s": compile_s,
        "sim_s": sim_s,
    }
    big = max(report.kernels, key=lambda k: k.cycles)  # roofline: intensity vs the ridge
    ridge = chip.peak_flops / chip.dram_bandwidth
    bound = "compute" if big.intensity >= ridge else "memory"
    short = big.name if len(big.name) <= 40 else big.name[:37] + "..."
    out["biggest"] = f"{short}: {big.intensity:.0f} FLOP/B ({bound}-bound, ridge {ridge:.0f})"
    if eager:
        zeros = [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
        try:
            rep = run_eager(graph, *zeros, chip=chip, functional=False).report
            out["eager"], out["eager_kernels"] = rep.cycles, len(rep.kernels)
        except OutOfMemoryError:  # eager's caching allocator needs more than the plan
            out["eager_kernels"] = "out of DRAM"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="models whose name contains this")
    parser.add_argument("--chips", default=",".join(cs.chips()))
    parser.add_argument("--no-eager", action="store_true", help="skip the eager runs")
    parser.add_argument("--profile", action="store_true", help="cProfile compile + simulate")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
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
            r = row(name, graph, chip, not args.no_eager)
            if prof:
                prof.disable()
            eager = f"{r['eager']:,}" if "eager" in r else "-"
            speed = f"{r['eager'] / r['compiled']:.2f}x" if "eager" in r else "-"
            ek = r.get("eager_kernels", "-")
            print(
                f"| {name} | {r['chip']} | {eager} | {r['compiled']:,} | {speed} | {ek} -> "
                f"{r['kernels']} | {r['dram']:,} | {r['arena'] / max(r['bound'], 1):.3f} | "
                f"{r['biggest']} | {r['compile_s']:.2f} | {r['sim_s']:.2f} |",
                flush=True,
            )
            if prof:
                pstats.Stats(prof).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
