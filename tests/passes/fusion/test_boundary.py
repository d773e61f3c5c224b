"""The one kernel-boundary rule: what a group reads, writes and keeps inside, and the modules
that ask it (partition, code generator, cost model, compiler records) agree with it."""

from __future__ import annotations

import pytest

from chipsim.codegen.kernel import KernelSpec
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.fusion import group_outputs
from chipsim.passes.fusion.boundary import kernel_boundary, reads_of
from chipsim.testing.graphs import random_graph, random_partition


def test_a_chain_reads_its_input_writes_its_end_and_keeps_the_middle():
    b = GraphBuilder()
    x = b.input((4, 8), f32)
    h = b.op("add", x, b.const(1.0))
    y = b.op("relu", h)
    g = b.build(b.op("exp", y), h)  # h is also a graph output
    names = g.names()
    edge = kernel_boundary(g, [1, 2])  # add, relu
    assert [names[v] for v in edge.reads] == ["%0", "%1"]  # x and the constant
    assert [names[v] for v in edge.writes] == ["%2", "%3"]  # h (an output), y (read by exp)
    assert edge.inner == ()
    whole = kernel_boundary(g, [1, 2, 3])
    assert [names[v] for v in whole.writes] == ["%2", "%4"] and [names[v] for v in whole.inner] == [
        "%3"
    ]


@pytest.mark.parametrize("seed", range(30))
def test_every_user_of_the_rule_agrees_on_random_partitions(seed):
    graph = random_graph(seed, max_ops=10)
    partition = random_partition(graph, seed)
    outputs = set(graph.outputs)
    users = graph.users()
    for group in partition.groups:
        edge = kernel_boundary(graph, group)
        made = {graph.nodes[i].output for i in group}
        nodes = [graph.nodes[i] for i in sorted(group)]
        assert set(edge.writes) | set(edge.inner) == made
        assert not set(edge.writes) & set(edge.inner)
        assert not set(edge.reads) & made
        assert set(edge.reads) == {v for n in nodes for v in n.inputs} - made
        for v in edge.writes:  # needed after the kernel
            assert v in outputs or any(u not in nodes for u in users[v])
        assert list(edge.writes) == group_outputs(graph, group)
        assert edge.reads == reads_of(nodes)
        spec = KernelSpec.of_group(graph, group, {})
        assert (spec.inputs, spec.outputs) == (edge.reads, edge.writes)
