"""A learner's fusion pass and memory planner plug into ``chipsim.compile``; bad ones are named."""

import numpy as np
import pytest
from compiler_graphs import add_mul, example_inputs, mlp

import chipsim as cs
from chipsim.compiler import reference_fusion
from chipsim.errors import PartitionError, PassError, PlanError
from chipsim.passes.fusion import Partition, autotune, rule_fusion
from chipsim.passes.memory import MemoryPlan, greedy_by_size


def estimate_only_fusion(graph, chip):
    """The rule pass and the autotuner on their own estimates, no measured kernel costs."""
    return autotune(graph, chip, rule_fusion(graph, chip))


def test_a_learners_fusion_callable_is_used():
    calls = []

    def one_kernel_per_op(graph, chip):
        calls.append(chip.name)
        ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
        return Partition(tuple((i,) for i in ops))

    graph = add_mul()
    prog = cs.compile(graph, fusion=one_kernel_per_op)
    assert calls == ["edge-npu"]
    assert [k.name for k in prog.kernels] == ["add", "mul"]
    np.testing.assert_allclose(prog(np.ones(1024, np.float32)), np.full(1024, 4.0))


def test_a_learners_planner_callable_is_used():
    seen = []

    def my_planner(records, *, alignment=64):
        seen.append([r.id for r in records])
        return greedy_by_size(records, alignment=alignment)

    graph = mlp()
    prog = cs.compile(graph, planner=my_planner)
    assert seen == [[r.id for r in prog.plan.records]]
    args = example_inputs(graph)
    np.testing.assert_allclose(prog(*args), cs.interpret(graph, *args)[0], rtol=1e-5, atol=1e-6)


def test_a_partition_that_leaves_an_op_out_names_the_op():
    def forgetful(graph, chip):
        groups = reference_fusion(graph, chip).groups
        return Partition(groups[:-1])

    with pytest.raises(PartitionError, match=r"%\d+ = add.* in no group"):
        cs.compile(mlp(), fusion=forgetful)


def test_a_non_convex_partition_names_the_path():
    # y = exp(x) + relu(exp(x)) with the exp and the add in one kernel but relu outside
    b = cs.GraphBuilder()
    t = b.op("exp", b.input((64,), cs.f32, "x"))
    g = b.build(b.op("add", t, b.op("relu", t)))
    exp_i, relu_i, add_i = (i for i, n in enumerate(g.nodes) if n.op != "constant")

    def bad(graph, chip):
        return Partition(((exp_i, add_i), (relu_i,)))

    with pytest.raises(PartitionError, match=r"not convex.*%\d+ = relu"):
        cs.compile(g, fusion=bad, simplify=False)


def test_a_fusion_pass_that_returns_something_else_is_a_pass_error():
    with pytest.raises(PassError, match="must return a Partition"):
        cs.compile(add_mul(), fusion=lambda g, c: [[1, 3]])


def test_an_overlapping_plan_names_both_tensors():
    def everything_at_zero(records, *, alignment=64):
        return MemoryPlan(tuple(records), {r.id: 0 for r in records}, alignment, "zero")

    # the estimate-only pass keeps three kernels, so two tensors pass between them (with
    # measured costs the compiler fuses the whole MLP into one kernel: nothing to overlap)
    fusion = estimate_only_fusion
    prog = cs.compile(mlp(), fusion=fusion)
    ids = [r.id for r in prog.plan.records]
    with pytest.raises(PlanError, match=r"tensors '%\d+' and '%\d+' overlap") as err:
        cs.compile(mlp(), fusion=fusion, planner=everything_at_zero)
    assert sum(i in str(err.value) for i in ids) == 2


def test_a_plan_that_skips_a_tensor_is_refused():
    def drops_one(records, *, alignment=64):
        plan = greedy_by_size(records[1:], alignment=alignment)
        return MemoryPlan(plan.records, plan.offsets, alignment, "drops_one")

    with pytest.raises(PassError, match="does not cover tensor"):
        cs.compile(mlp(), planner=drops_one)


def test_an_unknown_planner_name_lists_the_known_ones():
    with pytest.raises(PlanError, match="greedy_by_size"):
        cs.compile(add_mul(), planner="best")
