"""Benchmark: simulate one GPT-2-small transformer block eagerly on the simulated chip.

Prints the wall time of the simulation, the simulated time, and the simulator's speed in
instructions per second, with and without functional execution (numpy work).

    .venv/bin/python benchmarks/sim_gpt2_block.py
"""

from __future__ import annotations

import platform
import time

import numpy as np

from chipsim.ir import Graph, GraphBuilder, f32
from chipsim.runtime import make_device

D, HEADS, SEQ = 768, 12, 128


def gpt2_block(seq: int = SEQ, d: int = D, heads: int = HEADS) -> Graph:
    """x -> x + attn(ln1(x)) -> h + mlp(ln2(h)), GPT-2 small sizes; weights are inputs."""
    b = GraphBuilder("gpt2_block")
    hd = d // heads
    x = b.input((seq, d), f32, "x")

    def linear(h, n_in, n_out, name):
        w, bias = b.input((n_in, n_out), f32, f"{name}.w"), b.input((n_out,), f32, f"{name}.b")
        return b.op("add", b.op("matmul", h, w), bias)

    def heads_first(t):  # (seq, d) -> (heads, seq, hd)
        return b.op("transpose", b.op("reshape", t, shape=(seq, heads, hd)), perm=(1, 0, 2))

    h = b.op("layernorm", x)
    q, k, v = (heads_first(linear(h, d, d, n)) for n in ("q", "k", "v"))
    scores = b.op(
        "mul", b.op("matmul", q, b.op("transpose", k, perm=(0, 2, 1))), b.const(1.0 / np.sqrt(hd))
    )
    att = b.op("matmul", b.op("softmax", scores), v)
    att = b.op("reshape", b.op("transpose", att, perm=(1, 0, 2)), shape=(seq, d))
    h1 = b.op("add", x, linear(att, d, d, "proj"))
    m = b.op("gelu", linear(b.op("layernorm", h1), d, 4 * d, "fc"))
    return b.build(b.op("add", h1, linear(m, 4 * d, d, "out")))


def run(chip: str, functional: bool) -> tuple[float, int, float]:
    """(wall seconds, instructions, simulated seconds) for one eager block."""
    g = gpt2_block()
    rng = np.random.default_rng(0)
    dev = make_device(chip, functional=functional)
    env = {}
    for v in g.inputs:
        arr = (rng.standard_normal(v.shape) * 0.02).astype(np.float32) if functional else None
        env[v] = dev.upload(arr, v.type)
    t0 = time.perf_counter()
    for n in g.nodes:
        env[n.output] = dev.run(n, [env[u] for u in n.inputs])
    if functional:
        dev.download(env[g.outputs[0]], g.outputs[0].type)
    wall = time.perf_counter() - t0
    return wall, len(dev.sim.records), dev.report.seconds


def main() -> None:
    print(
        f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    for chip in ("edge-npu", "datacenter-gpu"):
        for functional in (False, True):
            best = min(run(chip, functional) for _ in range(3))
            wall, n, sim_s = best
            mode = "functional" if functional else "timing-only"
            print(
                f"{chip:15s} {mode:11s}: wall {wall:.3f} s, {n:,} instructions, "
                f"{n / wall:,.0f} instr/s, simulated {sim_s * 1e3:.3f} ms"
            )


if __name__ == "__main__":
    main()
