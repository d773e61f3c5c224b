"""The kernel cost estimate and the cost-aware step of the reference pass."""

from __future__ import annotations

import numpy as np

from chipsim.hw import get_chip
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.fusion import autotune, rule_fusion
from chipsim.passes.fusion.cost import can_estimate, kernel_cycles

CHIP = get_chip("edge-npu")


def estimated(graph, chip):
    """The rule pass, then the autotuner on the estimate alone."""
    return autotune(graph, chip, rule_fusion(graph, chip))


def test_small_kernels_are_launch_bound_and_merging_saves_a_launch() -> None:
    b = GraphBuilder()
    x = b.input((64, 64), f32)
    g = b.build(b.op("relu", b.op("neg", x)))
    # each alone: 200 launch + max(4096 / 8 vector, 16 KiB in + 16 KiB out (output) / 16)
    assert kernel_cycles(g, [1], CHIP) == 200 + 1024
    assert kernel_cycles(g, [0, 1], CHIP) == 200 + 1024  # input and intermediate stay on chip


def test_a_transposing_kernel_does_not_overlap_dma_and_compute() -> None:
    b = GraphBuilder()
    x = b.input((128, 128), f32)
    g = b.build(b.op("transpose", x))
    # 16384 elements / 8 lanes = 2048 compute, then 64 KiB in + 64 KiB out / 16 = 8192 DMA
    # (64 KiB is above the on-chip limit, 1/16 of SRAM): summed, not overlapped
    assert kernel_cycles(g, [0], CHIP) == 200 + 2048 + 8192


def test_cost_step_gives_a_reduction_a_transpose_epilogue_and_a_conv_its_per_image_mean() -> None:
    b = GraphBuilder()
    x = b.input((64, 64), f32)
    y = b.op("transpose", b.op("sum", b.op("exp", x), axes=(-1,), keepdims=True))
    g = b.build(y)
    assert estimated(g, CHIP).kernel_names() == ["fused_exp_sum_transpose"]
    b = GraphBuilder()
    img = b.input((1, 8, 8, 3), f32)
    w = b.const(np.ones((3, 3, 3, 8), np.float32))
    g = b.build(b.op("mean", b.op("conv2d", img, w, padding="same"), axes=(1, 2)))
    # the mean over an image's pixels is row-wise (rows = images), as the code generator tiles it
    assert estimated(g, CHIP).kernel_names() == ["fused_conv2d_mean"]


def test_a_chip_without_cost_fields_gets_the_rule_partition() -> None:
    from types import SimpleNamespace

    stub = SimpleNamespace(sram=SimpleNamespace(capacity_bytes=1 << 20))
    assert not can_estimate(stub) and can_estimate(CHIP)
    b = GraphBuilder()
    x = b.input((4, 8), f32)
    g = b.build(b.op("matmul", b.op("relu", x), b.const(np.ones((8, 8), np.float32))))
    assert estimated(g, stub).groups == rule_fusion(g, stub).groups


def test_layer_fusion_keeps_a_big_intermediate_on_chip_and_is_faster() -> None:
    import chipsim as cs

    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input((128, 64), f32)
    w1 = b.const(rng.normal(size=(64, 256)).astype(np.float32))
    w2 = b.const(rng.normal(size=(256, 64)).astype(np.float32))
    g = b.build(b.op("matmul", b.op("relu", b.op("matmul", x, w1)), w2))
    fused = estimated(g, CHIP)
    assert fused.kernel_names() == ["fused_matmul_relu_matmul"]  # 128 KiB never leaves SRAM
    apart = rule_fusion(g)  # rules only: one contraction per kernel
    assert len(apart) == 2

    def report(p):
        return cs.compile(g, chip=CHIP, fusion=lambda gg, c: p, simplify=False).report

    def dram_bytes(r):
        return sum(k.dram_bytes for k in r.kernels)

    one, two = report(fused), report(apart)
    # the 128 KiB intermediate never goes to DRAM (split, it fits the SRAM arena as well)
    assert dram_bytes(one) <= dram_bytes(two)
    # both kernels here are compute-bound and the split layer streams its input from DRAM,
    # so on edge-npu fusion wins (almost) nothing here
    assert one.cycles <= 1.02 * two.cycles
