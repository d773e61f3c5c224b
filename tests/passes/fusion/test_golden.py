"""Golden before/after tests: a graph -> the exact partition the rule pass prints (the rule
pass is a readable table of rules, so its answers are exact; the cost step is tested by
properties, see test_properties.py)."""

from __future__ import annotations

import pytest

from chipsim.passes.fusion import rule_fusion, validate_partition

from . import graphs as G

GOLDEN = {
    "add_mul": "fused_add_mul: %2 %4",
    "linear_relu": "fused_matmul_add_relu: %2 %4 %5",
    "attention_graph": "transpose: %3\nfused_matmul_mul: %4 %6\nsoftmax: %7\nmatmul: %8",
    "elementwise_diamond": "fused_exp_mul_relu_add: %1 %3 %4 %5",
    "matmul_diamond": "relu: %1\nmatmul: %3\nfused_matmul_add: %5 %6",
    "two_matmuls": "matmul: %2\nmatmul_1: %4",
    "layernorm_matmul": "layernorm: %1\nfused_matmul_add_gelu: %3 %5 %6",
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_partition(name: str) -> None:
    graph = getattr(G, name)()
    partition = rule_fusion(graph)
    validate_partition(graph, partition)
    assert str(partition) == GOLDEN[name]


def test_shared_expensive_producer_is_not_duplicated() -> None:
    graph = G.matmul_diamond()
    partition = rule_fusion(graph)
    relu = next(i for i, n in enumerate(graph.nodes) if n.op == "relu")
    holders = [g for g in partition.groups if relu in g]
    assert holders == [(relu,)]  # its own kernel: written once, read by both matmuls


@pytest.mark.parametrize(
    ("name", "kernels"),
    [("mlp", 3), ("transformer_block", 12), ("small_cnn", 4), ("add_mul", 1)],
)
def test_kernel_count(name: str, kernels: int) -> None:
    graph = getattr(G, name)()
    assert len(rule_fusion(graph)) == kernels


def test_kernel_names_of_mlp_and_cnn() -> None:
    assert rule_fusion(G.mlp()).kernel_names() == [
        "fused_matmul_add_relu",
        "fused_matmul_add_relu_1",
        "fused_matmul_add",
    ]
    assert rule_fusion(G.small_cnn()).kernel_names() == [
        "fused_conv2d_add_relu",
        "fused_conv2d_add_relu_1",
        "fused_mean_reshape",  # a reduction takes an injective epilogue (round 2)
        "fused_matmul_add",
    ]


def test_transformer_block_without_fusion_has_one_kernel_per_op() -> None:
    from chipsim.passes.fusion import no_fusion

    graph = G.transformer_block()
    ops = sum(n.op != "constant" for n in graph.nodes)
    assert len(no_fusion(graph)) == ops == 18
