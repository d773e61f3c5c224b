"""Issue 10, finding 3: the fusion cost model and the code generator read the same row rules.

Whether a kernel streams row tiles (DMA overlapping compute) is decided once, by
:func:`chipsim.ir.ops.tiling.row_tiling` over the ops' own row rules; the estimate and the
code generator must give the same answer on every group.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.codegen.kernel import KernelSpec, Location
from chipsim.codegen.planning import plan_kernel
from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, f32
from chipsim.ir.graph import Graph
from chipsim.passes.fusion.cost import estimate_kernel
from chipsim.passes.fusion.partition import group_outputs
from chipsim.testing.graphs import random_graph, random_partition

CHIP = get_chip("edge-npu")


def codegen_tiles_rows(graph: Graph, group: list[int]) -> bool:
    """Whether the code generator cuts the group's kernel into row tiles (all in DRAM)."""
    nodes = [graph.nodes[i] for i in sorted(group)]
    spec = KernelSpec.of(nodes, group_outputs(graph, group), {})
    where = {v: Location("dram", k * 2**22) for k, v in enumerate((*spec.inputs, *spec.outputs))}
    spec = KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, where)
    plan = plan_kernel(spec, CHIP)
    assert plan.mode == "tiled", plan
    return plan.rows > 1


def one_op(shape, op, **attrs) -> Graph:
    b = GraphBuilder()
    return b.build(b.op(op, b.input(shape, f32), **attrs))


def sum_then_broadcast() -> Graph:
    """sum over the last axis of f32[64, 64] (64 values) added to every row of f32[8, 64]."""
    b = GraphBuilder()
    s = b.op("sum", b.input((64, 64), f32), axes=(-1,))
    return b.build(b.op("add", b.input((8, 64), f32), s))


def weight_made_in_kernel() -> Graph:
    """x @ relu(W): relu(W) is needed whole by every row tile, so the kernel cannot stream."""
    b = GraphBuilder()
    x, w = b.input((256, 64), f32), b.input((64, 64), f32)
    return b.build(b.op("matmul", x, b.op("relu", w)))


@pytest.mark.parametrize(
    ("graph", "streams"),
    [
        (one_op((256, 16, 16), "transpose", perm=(0, 2, 1)), True),
        (one_op((64, 64), "sum", axes=(-1,)), True),
        (one_op((64, 64), "sum", axes=(0,)), False),
        (sum_then_broadcast(), False),
        (weight_made_in_kernel(), False),
    ],
    ids=["transpose_021", "sum_last", "sum_first", "sum_then_broadcast", "weight_made_inside"],
)
def test_estimate_and_code_generator_agree_on_streaming(graph: Graph, streams: bool) -> None:
    group = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    assert estimate_kernel(graph, group, CHIP).streams is streams
    assert codegen_tiles_rows(graph, group) is streams


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_agreement_on_random_groups(graph_seed: int, partition_seed: int) -> None:
    graph = random_graph(graph_seed)
    for group in random_partition(graph, partition_seed).groups:
        nodes = [graph.nodes[i] for i in group]
        spec = KernelSpec.of(nodes, group_outputs(graph, list(group)), {})
        where = {
            v: Location("dram", k * 2**22) for k, v in enumerate((*spec.inputs, *spec.outputs))
        }
        plan = plan_kernel(
            KernelSpec(spec.name, spec.nodes, spec.inputs, spec.outputs, where), CHIP
        )
        if plan.mode != "tiled":
            continue  # blocked and spilled kernels have their own schedules
        assert estimate_kernel(graph, group, CHIP).streams is (plan.rows > 1), group
