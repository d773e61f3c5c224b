"""The measured kernel costs (the autotuner's timer) the reference fusion uses."""

from compiler_graphs import add_mul, mlp

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits, kernel_timer
from chipsim.hw.chip import get_chip
from chipsim.passes.fusion import Partition, autotune, rule_fusion


def ops_of(graph):
    return [i for i, n in enumerate(graph.nodes) if n.op != "constant"]


def test_measured_cost_is_the_kernel_alone_on_the_simulator():
    graph = add_mul()
    chip = get_chip("edge-npu")
    cost = kernel_timer(graph, chip)
    group = tuple(ops_of(graph))
    one = cs.compile(graph, fusion=lambda g, c: Partition([group], graph=g), simplify=False)
    (span,) = [k for k in one.report.kernels if k.name != "load_inputs"]
    # the kernel alone: its body after the launch (the launch hides behind earlier kernels)
    assert cost(group) == max(span.cycles, chip.launch.graph_cycles)
    assert cost(group) == cost(list(group))  # memoised by group, however it is passed


def test_the_pass_follows_the_cost_it_is_handed():
    graph = mlp()
    chip = get_chip("edge-npu")
    ops = ops_of(graph)
    fits = kernel_fits(graph, chip)
    rules = rule_fusion(graph, chip, fits=fits)
    merged = autotune(graph, chip, rules, fits=fits, kernel_cycles=lambda group: 1)
    assert len(merged.groups) < len(ops)
    # a kernel costs the square of its size: no merge ever pays, so every op stays alone
    alone = autotune(
        graph, chip, rules, fits=fits, kernel_cycles=lambda group: len(group) ** 2 * 10**6
    )
    # moving an op out of its kernel always pays, so every op ends alone
    assert sorted(alone.groups) == sorted((i,) for i in ops)


def test_without_a_measured_cost_the_estimate_decides():
    graph = mlp()
    chip = get_chip("edge-npu")
    assert autotune(graph, chip, rule_fusion(graph, chip)).kernel_names(graph) == [
        "fused_matmul_add_relu",
        "fused_matmul_add",
        "fused_relu_matmul_add",
    ]
