"""Small correctness details of compiled programs and graphs (issue 10 finding 7)."""

import dataclasses

import numpy as np

import chipsim as cs
from chipsim.ir import GraphBuilder, f32


def test_load_inputs_reports_its_hardware_ops():
    # two kernels read x, so the program copies it on chip once (the load_inputs kernel)
    x = np.ones((64, 64), np.float32)
    prog = cs.compile(lambda x: cs.ops.relu(x) @ x, x, chip="edge-npu", fusion=None)
    loads = [k for k in prog.report.kernels if k.name == "load_inputs"]
    assert loads, [k.name for k in prog.report.kernels]
    instrs = [i for i in prog.instructions if i.kernel == "load_inputs"]
    assert loads[0].hw_ops == len(instrs) >= 1  # one DMA transfer each, as in every kernel
    assert all(i.unit == "dma" and i.hw_ops == 1 for i in instrs)


def test_dataclasses_replace_on_a_graph_does_not_keep_a_stale_users_cache():
    b = GraphBuilder()
    x = b.input((4,), f32)
    y = b.op("relu", x)
    z = b.op("neg", x)
    g = b.build(y)
    assert [n.op for n in g.users()[x]] == ["relu", "neg"] or g.users()[x]  # cache filled
    relu_node = g.nodes[0] if g.nodes[0].op == "relu" else g.nodes[1]
    smaller = dataclasses.replace(g, nodes=(relu_node,), outputs=(y,))
    assert [n.op for n in smaller.users()[x]] == ["relu"]
    assert z not in smaller.users()
    again = g.replace(nodes=(relu_node,))
    assert [n.op for n in again.users()[x]] == ["relu"]
