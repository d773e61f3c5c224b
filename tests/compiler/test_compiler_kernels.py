"""Kernel counts and names, the golden placement, and the fusion=None / planner=None switches."""

import numpy as np
import pytest
from compiler_graphs import BUILDERS, add_mul, attention_head, linear_relu, mlp, small_cnn

import chipsim as cs
from chipsim.passes.fusion import autotune, rule_fusion
from chipsim.passes.memory import naive


@pytest.mark.parametrize(
    ("graph", "kernels"),
    [
        (add_mul(), ["fused_add_mul"]),
        # The compiler hands the reference pass measured kernel costs; each partition below
        # is faster on edge-npu than the estimate-only one (cycles: measured / estimate-only).
        (linear_relu(1), ["fused_matmul_add_relu"]),  # 1,464 cycles (no fusion: 1,464)
        (linear_relu(2), ["fused_matmul_add_relu"]),  # 1,908 cycles (no fusion: 1,996)
        (mlp(), ["fused_matmul_add_relu_matmul_add_relu_matmul_add"]),  # 3,838 / 4,608
        (small_cnn(), ["fused_conv2d_add_relu_conv2d_add_relu", "mean"]),  # 1,715 / 1,991
    ],
    ids=["add_mul", "linear_relu_rank1", "linear_relu_rank2", "mlp", "small_cnn"],
)
def test_reference_fusion_kernel_names(graph, kernels):
    assert [k.name for k in cs.compile(graph).kernels] == kernels


def test_a_traced_function_gets_the_same_kernels_as_the_built_graph():
    prog = cs.compile(lambda x: (x + 1) * 2, np.zeros(1024, np.float32))
    assert [k.name for k in prog.kernels] == ["fused_add_mul"]
    np.testing.assert_array_equal(prog(np.full(1024, 3.0, np.float32)), np.full(1024, 8.0))


@pytest.mark.parametrize("name", list(BUILDERS))
def test_no_fusion_gives_one_kernel_per_op(name):
    graph = BUILDERS[name]()
    prog = cs.compile(graph, fusion=None, simplify=False)
    ops = [n for n in graph.nodes if n.op != "constant"]
    assert len(prog.kernels) == len(ops)
    assert all(len(k.nodes) == 1 for k in prog.kernels)
    assert cs.compile(graph, fusion="none", simplify=False).partition.groups == (
        prog.partition.groups
    )


def test_fusion_never_makes_more_kernels_than_ops():
    for name, build in BUILDERS.items():
        graph = build()
        fused, unfused = cs.compile(graph), cs.compile(graph, fusion=None)
        assert len(fused.kernels) <= len(unfused.kernels), name


def estimate_only_fusion(graph, chip):
    """The reference pass run alone (its own estimate): the classic partitions, which keep
    tensors between kernels and the matmul's epilogue in its kernel."""
    return autotune(graph, chip, rule_fusion(graph, chip))


@pytest.mark.parametrize(
    ("graph", "kernels"),
    [
        (linear_relu(1), ["fused_matmul_add_relu"]),
        (linear_relu(2), ["fused_matmul_add_relu"]),
        (mlp(), ["fused_matmul_add_relu", "fused_matmul_add", "fused_relu_matmul_add"]),
        (small_cnn(), ["fused_conv2d_add_relu", "fused_conv2d_add_relu_mean"]),
    ],
    ids=["linear_relu_rank1", "linear_relu_rank2", "mlp", "small_cnn"],
)
def test_estimate_only_reference_fusion_kernel_names(graph, kernels):
    prog = cs.compile(graph, fusion=estimate_only_fusion)
    assert [k.name for k in prog.kernels] == kernels


def test_planner_none_is_the_naive_plan():
    graph = mlp()
    prog = cs.compile(graph, fusion=estimate_only_fusion, planner=None)
    expected = naive(prog.plan.records)
    assert prog.plan.offsets == expected.offsets
    assert prog.plan.arena_size == sum(-(-r.size // 64) * 64 for r in prog.plan.records)
    assert cs.compile(graph, fusion=estimate_only_fusion).plan.arena_size < prog.plan.arena_size


GOLDEN_PLACEMENT = """\
tensor  type         role                level          offset  why
------  -----------  ------------------  -------------  ------  ------------------------------------------
%0 (x)  f32[48]      input               SRAM           0       its plan slot ends at 192 B, inside 50% of
                                                                SRAM
%1      f32[64, 48]  weight              DRAM           0       read once per kernel: streamed from DRAM
                                                                tile by tile
%2      f32[64]      small constant      registers      0       tiny and read by every tile: loaded into
                                                                registers once
%3      f32[64]      fused intermediate  on-chip tiles  -       produced and consumed inside one kernel
%4      f32[64]      fused intermediate  on-chip tiles  -       produced and consumed inside one kernel
%5      f32[64]      output              DRAM           12480   returned to the host, which reads DRAM
activation arena: 192 bytes; 0 activation(s) spilled to DRAM"""  # noqa: E501


def test_golden_placement_w_in_dram_x_in_sram_b_in_registers():
    prog = cs.compile(linear_relu(1), fusion=estimate_only_fusion)
    lines = [line.rstrip() for line in str(prog.placement).splitlines()]
    assert lines == GOLDEN_PLACEMENT.splitlines()
    x = prog.graph.inputs[0]
    w, b = (n.output for n in prog.graph.nodes if n.op == "constant")
    assert (prog.placement.level(w), prog.placement.level(x), prog.placement.level(b)) == (
        "dram",
        "sram",
        "reg",
    )


def test_summary_lists_kernels_plan_and_placement():
    text = cs.compile(attention_head()).summary()
    assert "kernels:" in text and "softmax" in text
    assert "MemoryPlan" in text and "activation arena" in text


def test_a_spilling_kernels_intermediates_are_placed_in_dram_scratch_not_on_chip_tiles():
    from chipsim.ir import GraphBuilder, f32
    from chipsim.passes.fusion import Partition

    b = GraphBuilder("wide")
    x, w = b.input((64, 2048), f32, "x"), b.input((2048, 2048), f32, "w")
    y = b.op("softmax", b.op("exp", b.op("matmul", x, w)))  # a row of W is 2048 wide: no tile fits
    graph = b.build(b.op("add", y, y))
    ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    one = cs.compile(graph, chip="edge-npu", simplify=False,
                     fusion=lambda g, c: Partition([ops], graph=g))  # fmt: skip
    assert one.kernels[0].scratch is not None  # the one kernel runs in spill mode
    inside = [r for r in one.placement.rows() if r["role"] == "fused intermediate"]
    assert len(inside) == 3 and all(r["level"] == "DRAM scratch" for r in inside)
    assert "spill mode" in inside[0]["why"] and "DRAM scratch" in str(one.placement)
    # a kernel that fits keeps its intermediates in its tile buffers
    fits = cs.compile(linear_relu(1), fusion=estimate_only_fusion)
    assert all(r["level"] == "on-chip tiles" for r in fits.placement.rows()
               if r["role"] == "fused intermediate")  # fmt: skip
