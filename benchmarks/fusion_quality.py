"""Benchmark: the reference fusion pass against the best partition found by exhaustive search.

For generated graphs (``chipsim.testing.graphs.random_graph``, seeds ``0..N-1``, at most 12
ops, tensor sides from ``REALISTIC_DIMS`` = 32..256 so that DRAM traffic and compute matter,
not only kernel launches) every connected convex partition is compiled for edge-npu and timed with
``program.report.cycles``; the reference fusion (as ``chipsim.compile`` runs it, with
measured kernel costs) is timed the same way. We report the share
of graphs where the reference is within 5 % of the best (target >= 90 %), and the worst ones.

    .venv/bin/python benchmarks/fusion_quality.py [N]

All numbers are simulated cycles, so they are the same on every machine.
"""

from __future__ import annotations

import sys
import time

import chipsim as cs
from chipsim.passes.fusion import all_partitions
from chipsim.testing.graphs import REALISTIC_DIMS, random_graph

CHIP = "edge-npu"
TOLERANCE = 0.05


def cycles(graph, fusion) -> int:
    # simplify=False: the partitions index the generated graph's nodes as they are
    return cs.compile(graph, chip=CHIP, fusion=fusion, simplify=False).report.cycles


def measure(seed: int) -> dict:
    graph = random_graph(seed, max_ops=12, dims=REALISTIC_DIMS)
    ref = cycles(graph, "reference")
    best, best_p, count = None, None, 0
    for p in all_partitions(graph):
        c = cycles(graph, lambda g, chip, p=p: p)
        count += 1
        if best is None or c < best:
            best, best_p = c, p
    ref_p = cs.compile(graph, chip=CHIP, simplify=False).partition
    return {
        "seed": seed,
        "ops": sum(n.op != "constant" for n in graph.nodes),
        "partitions": count,
        "reference": ref,
        "best": best,
        "ratio": ref / best,
        "reference_kernels": ref_p.kernel_names(graph),
        "best_kernels": best_p.kernel_names(graph),
    }


def main(n: int = 100) -> None:
    start = time.perf_counter()  # wall time is printed, never part of a result
    rows = [measure(s) for s in range(n)]
    within = sum(r["ratio"] <= 1 + TOLERANCE for r in rows)
    total = sum(r["partitions"] for r in rows)
    print(f"{n} graphs, {total:,} partitions compiled and simulated on {CHIP}")
    print(
        f"reference within {TOLERANCE:.0%} of the best: {within}/{n} = {within / n:.0%} "
        f"(target >= 90%)"
    )
    mean = sum(r["ratio"] for r in rows) / n
    print(f"mean reference/best cycles: {mean:.3f}; worst {max(r['ratio'] for r in rows):.3f}")
    print(f"wall time {time.perf_counter() - start:.0f} s")
    print("\nworst graphs:")
    print("| seed | ops | partitions | reference cycles | best cycles | ratio | reference | best |")
    print("|---:|---:|---:|---:|---:|---:|---|---|")
    for r in sorted(rows, key=lambda r: -r["ratio"])[:8]:
        print(
            f"| {r['seed']} | {r['ops']} | {r['partitions']} | {r['reference']:,} "
            f"| {r['best']:,} | {r['ratio']:.3f} | {', '.join(r['reference_kernels'])} "
            f"| {', '.join(r['best_kernels'])} |"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
