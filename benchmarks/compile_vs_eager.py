"""Benchmark: compiled programs vs eager execution, in simulated cycles and DRAM bytes.

For each graph and chip: eager (one kernel per op, caching allocator, launch overhead per
op) against ``chipsim.compile`` (reference fusion, greedy memory plan, placement). Then the
wall time to compile + simulate (timing only, ``program.report``) a GPT-2-small block.

    .venv/bin/python benchmarks/compile_vs_eager.py

Cycles and bytes are deterministic; only the wall-time line depends on the machine.
"""

from __future__ import annotations

import platform
import time

import numpy as np
from sim_gpt2_block import gpt2_block  # the GPT-2-small block builder (weights are inputs)

import chipsim as cs
from chipsim.ir import Graph, GraphBuilder, f32
from chipsim.workloads.blocks import cnn_graph
from chipsim.workloads.eager import run_eager
from chipsim.workloads.mlp import mlp_forward, mlp_params

CHIPS = ("edge-npu", "datacenter-gpu")


def add_mul(n: int = 1024) -> Graph:
    """y = (x + 1) * 2"""
    b = GraphBuilder("add_mul")
    x = b.input((n,), f32, "x")
    return b.build(b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0)))


def linear_relu(n: int = 256, k: int = 256) -> Graph:
    """y = relu(W @ x + b), x a vector."""
    rng = np.random.default_rng(0)
    b = GraphBuilder("linear_relu")
    x = b.input((k,), f32, "x")
    w = b.const((rng.normal(size=(n, k)) / 16).astype(np.float32))
    bias = b.const(rng.normal(size=n).astype(np.float32))
    return b.build(b.op("relu", b.op("add", b.op("matmul", w, x), bias)))


def mlp(rows: int = 64, dims: tuple[int, ...] = (256, 512, 512, 10)) -> Graph:
    """A 3-layer MLP (the training workload's forward pass), weights as constants."""
    params = mlp_params(dims)
    return cs.trace(lambda x: mlp_forward(x, *params), np.zeros((rows, dims[0]), np.float32))


GRAPHS = {
    "y = (x + 1) * 2, f32[1024]": add_mul,
    "y = relu(W @ x + b), W f32[256, 256]": linear_relu,
    "MLP 256-512-512-10, batch 64": mlp,
    "GPT-2-small block (d 768, 12 heads, seq 128)": gpt2_block,
    "small CNN (16x16x3, 2 conv layers, classifier)": lambda: cnn_graph(0),
}


def compare(graph: Graph, chip: str) -> dict[str, float]:
    zeros = [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
    eager = run_eager(graph, *zeros, chip=chip, functional=False).report
    prog = cs.compile(graph, chip=chip)
    rep = prog.report
    return {
        "eager_cycles": eager.cycles,
        "compiled_cycles": rep.cycles,
        "speedup": eager.cycles / rep.cycles,
        "eager_dram": eager.bytes_moved["dram"],
        "compiled_dram": rep.bytes_moved["dram"],
        "eager_kernels": len(eager.kernels),
        "compiled_kernels": len(prog.kernels),
    }


def gpt2_wall_time(chip: str, repeats: int = 3) -> tuple[float, int]:
    """Best-of wall seconds to build, compile and simulate (timing only) the GPT-2 block."""
    best, n = float("inf"), 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        prog = cs.compile(gpt2_block(), chip=chip)
        _ = prog.report.cycles
        best = min(best, time.perf_counter() - t0)
        n = len(prog.instructions)
    return best, n


def main() -> None:
    print(f"machine: {platform.machine()}, Python {platform.python_version()}\n")
    print(
        "| graph | chip | eager cycles | compiled cycles | speedup | eager DRAM bytes "
        "| compiled DRAM bytes | kernels eager -> compiled |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, build in GRAPHS.items():
        graph = build()
        for chip in CHIPS:
            r = compare(graph, chip)
            print(
                f"| {name} | {chip} | {r['eager_cycles']:,} | {r['compiled_cycles']:,} "
                f"| {r['speedup']:.2f}x | {r['eager_dram']:,} | {r['compiled_dram']:,} "
                f"| {r['eager_kernels']} -> {r['compiled_kernels']} |"
            )
    print()
    for chip in CHIPS:
        wall, n = gpt2_wall_time(chip)
        print(
            f"GPT-2 block, {chip}: compile + simulate (timing only) {wall:.3f} s "
            f"(target about 1 s), {n:,} instructions"
        )


if __name__ == "__main__":
    main()
