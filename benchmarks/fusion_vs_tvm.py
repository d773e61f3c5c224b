"""chipsim's reference fusion next to a production compiler's rule-based fusion (TVM Relax
``FuseOps``), both partitions compiled and simulated by chipsim on the same chip.

TVM is never a course dependency: it lives in its own venv (``python -m venv /work/tvm-venv
&& /work/tvm-venv/bin/pip install apache-tvm``) and is run as a separate process on
``tvm_fuseops_groups.py``, which prints the groups TVM made. Usage::

    .venv/bin/python benchmarks/fusion_vs_tvm.py [--tvm-python /work/tvm-venv/bin/python]

Prints a Markdown table (cycles on edge-npu; lower is better) for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits
from chipsim.compiler import reference_fusion
from chipsim.ir import GraphBuilder, f32
from chipsim.ir.graph import Graph
from chipsim.passes.fusion import Partition, no_fusion, rule_fusion

HERE = Path(__file__).resolve().parent
CHIP = cs.chip("edge-npu")


def mlp() -> Graph:
    """MLP 256-512-512-10, batch 64: matmul + bias (+ relu) per layer."""
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    h = b.input((64, 256), f32)
    dims = (256, 512, 512, 10)
    for i, (k, n) in enumerate(zip(dims, dims[1:], strict=False)):
        w = b.const((rng.normal(size=(k, n)) / 16).astype(np.float32))
        h = b.op("add", b.op("matmul", h, w), b.const(np.zeros(n, np.float32)))
        if i < 2:
            h = b.op("relu", h)
    return b.build(h)


def diamond() -> Graph:
    """matmul -> (relu, x 0.5) -> add: the matmul's result has two users."""
    rng = np.random.default_rng(1)
    b = GraphBuilder()
    m = b.op("matmul", b.input((256, 256), f32),
             b.const(rng.normal(size=(256, 256)).astype(np.float32)))  # fmt: skip
    return b.build(b.op("add", b.op("relu", m), b.op("mul", m, b.const(0.5))))


def reduce_then_elementwise() -> Graph:
    """sum of squares over the last axis, then x 0.5 and + 1 (an RMS-style statistic)."""
    b = GraphBuilder()
    x = b.input((512, 256), f32)
    s = b.op("sum", b.op("mul", x, x), axes=(-1,), keepdims=True)
    return b.build(b.op("add", b.op("mul", s, b.const(0.5)), b.const(1.0)))


GRAPHS = {
    "MLP 256-512-512-10, batch 64": mlp,
    "diamond: matmul -> relu, x0.5 -> add": diamond,
    "reduction + elementwise: sum(x*x) x0.5 + 1": reduce_then_elementwise,
}


def describe(graph: Graph) -> dict:
    """The graph as JSON for the TVM side: node ops, inputs (node index or "in<k>"), attrs."""
    index = {n.output: str(i) for i, n in enumerate(graph.nodes)}
    index |= {v: f"in{k}" for k, v in enumerate(graph.inputs)}
    nodes = []
    for n in graph.nodes:
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in n.attrs.items()
                 if n.op != "constant"}  # fmt: skip
        nodes.append({"op": n.op, "inputs": [index[v] for v in n.inputs],
                      "shape": list(n.output.shape), "attrs": attrs})  # fmt: skip
    return {"inputs": [list(v.shape) for v in graph.inputs], "nodes": nodes,
            "outputs": [int(index[v]) for v in graph.outputs]}  # fmt: skip


def tvm_groups(graph: Graph, tvm_python: str) -> Partition:
    done = subprocess.run([tvm_python, str(HERE / "tvm_fuseops_groups.py")],
                          input=json.dumps(describe(graph)), capture_output=True, text=True,
                          check=True)  # fmt: skip
    return Partition(json.loads(done.stdout.strip().splitlines()[-1]), graph=graph)


def cycles(graph: Graph, partition: Partition) -> int:
    prog = cs.compile(graph, chip=CHIP, fusion=lambda g, c: partition, simplify=False)
    return prog.report.cycles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tvm-python", default="/work/tvm-venv/bin/python")
    args = ap.parse_args()
    print(f"chip: {CHIP.name}; machine: {platform.machine()}, Python {sys.version.split()[0]}")
    print("| graph | no fusion | TVM FuseOps | chipsim rules | chipsim reference | "
          "reference vs TVM | kernels (TVM / reference) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---|")
    notes = []
    for name, build in GRAPHS.items():
        g = build()
        tvm = tvm_groups(g, args.tvm_python)
        rules = rule_fusion(g, CHIP, fits=kernel_fits(g, CHIP))
        ref = reference_fusion(g, CHIP)
        c = {k: cycles(g, p) for k, p in
             (("none", no_fusion(g)), ("tvm", tvm), ("rules", rules), ("ref", ref))}  # fmt: skip
        print(f"| {name} | {c['none']:,} | {c['tvm']:,} | {c['rules']:,} | {c['ref']:,} | "
              f"{c['ref'] / c['tvm'] - 1:+.1%} | {len(tvm)} / {len(ref)} |")  # fmt: skip
        same = "the same groups as" if sorted(rules.groups) == sorted(tvm.groups) else "unlike"
        notes.append(f"- {name}: chipsim's rules make {same} TVM's; TVM {list(tvm.groups)}, "
                     f"reference {list(ref.groups)} (node indices)")  # fmt: skip
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
