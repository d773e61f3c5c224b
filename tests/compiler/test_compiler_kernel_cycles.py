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


def test_repeated_layers_are_measured_once_and_every_kernel_as_if_alone(monkeypatch):
    """The timer and the capacity rule share results between groups with the same
    ``spec_key``. Layers 2 and 3 are identical; layer 1 (other input width) and the last
    (other output width, a graph output) only look alike: each group must get exactly what a
    fresh timer, which has measured nothing else, says."""
    import chipsim.codegen.feasibility as feasibility

    graph = mlp(dims=(32, 64, 64, 64, 16))
    chip = get_chip("edge-npu")
    ops = ops_of(graph)
    groups = [tuple(ops[a:b]) for a in range(len(ops)) for b in range(a + 1, len(ops) + 1)]
    lowered = []
    real_lower = feasibility.lower

    def counting_lower(spec, *args, **kwargs):
        lowered.append(spec)
        return real_lower(spec, *args, **kwargs)

    monkeypatch.setattr(feasibility, "lower", counting_lower)
    shared_cost, shared_fits = kernel_timer(graph, chip), kernel_fits(graph, chip)
    costs = [shared_cost(g) for g in groups]
    fitting = [shared_fits(g) for g in groups]
    assert len(lowered) < len(groups)  # the repeated layers' kernels were measured once
    assert costs == [kernel_timer(graph, chip)(g) for g in groups]
    assert fitting == [kernel_fits(graph, chip)(g) for g in groups]


def test_the_shared_measurements_leave_the_partition_as_fresh_ones_do():
    import chipsim.models as models

    graph = models.gpt2_small(seq=16, layers=3, hidden=32, heads=4, vocab=60, max_positions=32)
    chip = get_chip("edge-npu")
    fits = kernel_fits(graph, chip)
    rules = rule_fusion(graph, chip, fits=fits)
    shared = autotune(graph, chip, rules, fits=fits, kernel_cycles=kernel_timer(graph, chip))
    fresh = autotune(
        graph, chip, rules, fits=fits, kernel_cycles=lambda g: kernel_timer(graph, chip)(g)
    )
    assert shared.groups == fresh.groups
