"""Benchmark: chipsim beside XLA (through JAX, on this CPU) on the book's graphs.

For each graph: the kernels chipsim's reference fusion forms on ``cpu-simd`` and the kernels
XLA forms (read from its optimised HLO, see ``chipsim.xla``), how they line up, the memory
each compiler plans, and the wall time of eager numpy against ``jax.jit`` on one pinned core
beside chipsim's prediction for a ``cpu-simd`` core calibrated to this machine (the chip in
``this-cpu.toml`` if ``python -m chipsim calibrate`` wrote one here, else a quick
calibration). The page book/xla.md shows the same comparisons.

    .venv/bin/python benchmarks/xla_vs_chipsim.py [--samples 15]

Kernel counts and bytes depend on the JAX version (printed), not on the machine; wall times
depend on both and on the load.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np

import chipsim as cs
from chipsim.calibration.host import calibrate_host
from chipsim.calibration.host_timing import machine_description, measure_host
from chipsim.workloads.blocks import cnn_graph
from chipsim.workloads.eager import run_eager
from chipsim.workloads.mlp import mlp_forward, mlp_params
from chipsim.xla import compare_fusion, compile_xla, load_jax, parse_hlo, to_jax
from chipsim.xla.timing import measure_wall

D_MODEL, HEADS, SEQ = 768, 12, 128
HEAD_DIM = D_MODEL // HEADS


def gpt2_block() -> cs.Graph:
    """The GPT-2-small block of book/mapping_flow.md (weights are constants), traced."""
    rng = np.random.default_rng(0)

    def weight(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    params = {name: weight(D_MODEL, D_MODEL) for name in ("q", "k", "v", "proj")}
    params["fc"], params["out"] = weight(D_MODEL, 4 * D_MODEL), weight(4 * D_MODEL, D_MODEL)
    bias = {name: np.zeros(w.shape[1], np.float32) for name, w in params.items()}

    def linear(h, name):
        return h @ params[name] + bias[name]

    def split_heads(t):
        return cs.ops.transpose(cs.ops.reshape(t, (SEQ, HEADS, HEAD_DIM)), (1, 0, 2))

    def block(x):
        h = cs.ops.layernorm(x)
        q, k, v = (split_heads(linear(h, name)) for name in ("q", "k", "v"))
        scores = (q @ cs.ops.transpose(k, (0, 2, 1))) * (1.0 / np.sqrt(HEAD_DIM))
        attention = cs.ops.softmax(scores) @ v
        attention = cs.ops.reshape(cs.ops.transpose(attention, (1, 0, 2)), (SEQ, D_MODEL))
        x = x + linear(attention, "proj")
        return x + linear(cs.ops.gelu(linear(cs.ops.layernorm(x), "fc")), "out")

    return cs.trace(block, np.zeros((SEQ, D_MODEL), np.float32))


def graphs() -> dict[str, cs.Graph]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    mlp = mlp_params((256, 512, 512, 10))
    return {
        "(x + 1) * 2, f32[1024]": cs.trace(lambda x: (x + 1) * 2, np.zeros(1024, np.float32)),
        "relu(W @ x + b), W f32[64, 256]": cs.trace(
            lambda x: cs.ops.relu(w @ x + b), np.zeros(256, np.float32)
        ),
        "MLP 256-512-512-10, batch 64": cs.trace(
            lambda t: mlp_forward(t, *mlp), np.zeros((64, 256), np.float32)
        ),
        "GPT-2-small block (d 768, 12 heads, seq 128)": gpt2_block(),
        "small CNN (cnn_graph(0): 8 x 16x16x3, 2 conv layers)": cnn_graph(0),
    }


def calibrated_cpu() -> tuple[cs.Chip, str]:
    saved = Path("this-cpu.toml")
    if saved.is_file():
        return cs.chip(str(saved)), "this-cpu.toml (python -m chipsim calibrate)"
    return calibrate_host(measure_host(quick=True, progress=False)).chip, "quick calibration"


def fusion_rows(all_graphs: dict[str, cs.Graph]) -> None:
    print(
        "| graph | kernels chipsim / XLA | operators per kernel chipsim / XLA "
        "| chipsim kernels XLA runs as one / splits | XLA kernels spanning chipsim kernels "
        "| matmul epilogues fused chipsim / XLA | kernels per layernorm, softmax (XLA) "
        "| free in XLA (bitcast) | arena / lower bound (chipsim) | temp / schedule peak (XLA) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, graph in all_graphs.items():
        c = compare_fusion(name, graph)
        program = cs.compile(graph, chip="cpu-simd")
        compiled = compile_xla(to_jax(program.graph))
        temp = compiled.memory_analysis().temp_size_in_bytes
        peak = parse_hlo(compiled.as_text()).live_peak()
        ops = c.ops_per_kernel()
        epi = c.contraction_epilogues()
        spread = c.reduction_spread()
        reductions = ", ".join(
            f"{op} {max(spread[op])}" for op in ("layernorm", "softmax") if op in spread
        )
        print(
            f"| {name} | {len(c.groups)} / {len(c.xla)} | {ops[0]:.1f} / {ops[1]:.1f} "
            f"| {len(c.same_groups)} / {len(c.split_groups)} | {len(c.merging_kernels)} "
            f"| {epi[0]} / {epi[1]} | {reductions or '-'} | {len(c.free_nodes)} "
            f"| {program.plan.arena_size:,} / {program.plan.lower_bound:,} "
            f"| {temp:,} / {peak:,} |"
        )


def timing_rows(all_graphs: dict[str, cs.Graph], samples: int) -> None:
    cpu, source = calibrated_cpu()
    print(f"\nprediction: {cpu.name} from {source}: {cpu}")
    measured = measure_wall(all_graphs, samples=samples)
    print(
        "\n| graph | eager numpy (median) | jax.jit (median) | measured speed-up (quartiles) "
        "| chipsim eager | chipsim compiled | predicted speed-up | XLA compile |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, graph in all_graphs.items():
        zeros = [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
        eager = run_eager(graph, *zeros, chip=cpu, functional=False, synchronous=True)
        compiled = cs.compile(graph, chip=cpu).report.seconds
        m = measured[name]
        low, high = m.speedup_range()
        print(
            f"| {name} | {m.eager_median * 1e6:,.1f} us | {m.compiled_median * 1e6:,.1f} us "
            f"| {m.speedup:.2f}x ({low:.2f}-{high:.2f}) | {eager.report.seconds * 1e6:,.1f} us "
            f"| {compiled * 1e6:,.1f} us | {eager.report.seconds / compiled:.2f}x "
            f"| {m.compile_seconds:.2f} s |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=15, help="timing samples per graph")
    args = parser.parse_args()
    jax = load_jax()
    print(
        f"machine: {machine_description()}; jax {jax.__version__}; "
        f"load {os.getloadavg()[0]:.2f}; {platform.platform()}\n"
    )
    all_graphs = graphs()
    fusion_rows(all_graphs)
    timing_rows(all_graphs, args.samples)


if __name__ == "__main__":
    main()
