"""Run graphs on the simulated chip by hand: place tensors in DRAM, lower, simulate."""

from __future__ import annotations

import numpy as np

from chipsim.codegen import KernelSpec, Location, kernel_name, lower
from chipsim.hw import Operand, Simulator, get_chip
from chipsim.ir import Graph
from chipsim.ir.dtypes import to_storage


def place(values, start=0, align=64):
    loc, cursor = {}, start
    for v in values:
        if v not in loc:
            loc[v] = Location("dram", cursor)
            cursor += -(-max(v.type.nbytes, 1) // align) * align
    return loc, cursor


def operand(v, loc):
    return Operand(loc.level, loc.offset, v.shape, v.dtype.name)


def run_graph(
    graph: Graph,
    *arrays,
    chip="edge-npu",
    fused=False,
    double_buffer=True,
    functional=True,
    sram_window=None,
):
    """Run ``graph`` as one kernel per node (or one fused kernel); return outputs and sim."""
    chip = get_chip(chip)
    sim = Simulator(chip, functional=functional)
    values = [*graph.inputs, *(n.output for n in graph.nodes)]
    loc, end = place(values)
    if functional:
        for v, a in zip(graph.inputs, arrays, strict=True):
            sim.memory["dram"].write(operand(v, loc[v]), to_storage(np.asarray(a), v.dtype))
        for n in graph.nodes:
            if n.op == "constant":
                sim.memory["dram"].write(operand(n.output, loc[n.output]), n.attrs["value"].array())
    kernels = []
    if fused:
        nodes = [n for n in graph.nodes if n.op != "constant"]
        spec = KernelSpec.of(nodes, graph.outputs, loc)
        spec = KernelSpec(
            spec.name,
            spec.nodes,
            spec.inputs,
            spec.outputs,
            loc,
            sram_window,
            Location("dram", end),
        )
        kernels.append(spec)
    else:
        for n in graph.nodes:
            if n.op == "constant":
                continue
            spec = KernelSpec.of([n], [n.output], loc)
            kernels.append(
                KernelSpec(
                    kernel_name([n]), spec.nodes, spec.inputs, spec.outputs, loc, sram_window
                )
            )
    for spec in kernels:
        sim.run(lower(spec, chip, double_buffer=double_buffer, launch="graph"))
    outs = [
        sim.memory["dram"].read(operand(v, loc[v])) if functional else None for v in graph.outputs
    ]
    return outs, sim
