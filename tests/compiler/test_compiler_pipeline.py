"""compile is a Pipeline of named stages; any fusion pass is run and checked alike (issue 10,
findings 4, 5 and 6)."""

import networkx as nx
import numpy as np
import pytest
from compiler_graphs import add_mul, mlp

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits
from chipsim.compiler import PIPELINE, CompileState, Pipeline, Stage, reference_fusion
from chipsim.errors import PartitionError, PassError, TraceError
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.fusion import Partition, no_fusion, rule_fusion
from chipsim.passes.fusion.capacity import fits as estimate_fits
from chipsim.passes.fusion.cost import kernel_budget

EDGE = cs.chip("edge-npu")


def mlp_256_512_512_10(rows: int = 64):
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    h = b.input((rows, 256), f32)
    dims = (256, 512, 512, 10)
    for i, (k, n) in enumerate(zip(dims, dims[1:], strict=False)):
        w = b.const((rng.normal(size=(k, n)) / 16).astype(np.float32))
        h = b.op("add", b.op("matmul", h, w), b.const(np.zeros(n, np.float32)))
        if i < 2:
            h = b.op("relu", h)
    return b.build(h)


# -- the pipeline ----------------------------------------------------------------------------
def test_pipeline_holds_the_named_stages_the_book_draws():
    assert PIPELINE.names == [
        "trace", "simplify", "fuse", "liveness", "plan memory", "place", "codegen"
    ]  # fmt: skip
    assert all(isinstance(s, Stage) and s.what for s in PIPELINE)
    name, what = PIPELINE.stages[2]  # a stage unpacks as (name, what) for pictures
    assert (name, what) == ("fuse", PIPELINE.stages[2].what)


def test_running_the_stages_by_hand_is_compile():
    graph = add_mul()
    state = CompileState(graph, (), EDGE)
    for stage in PIPELINE:
        state = stage.run(state)
    prog = cs.compile(graph)
    assert state.partition.groups == prog.partition.groups
    assert state.program.report.cycles == prog.report.cycles


def test_an_error_names_the_stage_that_failed():
    def python_if(x):
        if x > 0:  # a traced tensor has no truth value
            return x
        return -x

    with pytest.raises(TraceError) as info:
        cs.compile(python_if, np.zeros(4, np.float32))
    assert info.value.stage == "trace"
    assert "compile stage 'trace'" in "".join(info.value.__notes__)


def test_a_crashing_stage_is_a_pass_error_naming_it():
    def broken(state):
        raise ZeroDivisionError("oops")

    stages = [*PIPELINE.stages[:2], Stage("mine", "a stage of my own", broken)]
    with pytest.raises(PassError, match=r"compile stage 'mine' failed: ZeroDivisionError: oops"):
        Pipeline(stages, verify_each=False, wrap_errors=False, label="compile stage")(
            CompileState(add_mul(), (), EDGE)
        )


# -- finding 5: no identity checks --------------------------------------------------------------
def test_any_callable_is_treated_alike():
    graph = mlp_256_512_512_10()
    named = cs.compile(graph, fusion="reference", simplify=False)
    direct = cs.compile(graph, fusion=reference_fusion, simplify=False)
    wrapped = cs.compile(graph, fusion=lambda g, c: reference_fusion(g, c), simplify=False)
    assert named.partition.groups == direct.partition.groups == wrapped.partition.groups
    assert named.report.cycles == direct.report.cycles == wrapped.report.cycles
    # and the pass a learner calls gives what compile runs
    assert reference_fusion(graph, EDGE).groups == named.partition.groups


def test_alone_the_rule_pass_budgets_what_kernels_get():
    graph = mlp()
    group = tuple(i for i, n in enumerate(graph.nodes) if n.op != "constant")[:3]
    tight = cs.chip("edge-npu")
    assert kernel_budget(tight) == tight.sram.capacity_bytes // 2
    rules = rule_fusion(graph, tight)
    for g in rules.groups:
        assert len(g) == 1 or estimate_fits(graph, g, kernel_budget(tight))
    assert group  # the graph has ops


# -- finding 4: one capacity rule, the code generator's ---------------------------------------
def test_the_mlp_layer_1_epilogue_fuses_on_edge_npu():
    graph = mlp_256_512_512_10()
    ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    layer1 = tuple(ops[:3])  # matmul, add (bias), relu; W1 is 512 KiB, half of SRAM
    assert [graph.nodes[i].op for i in layer1] == ["matmul", "add", "relu"]
    assert not estimate_fits(graph, layer1, kernel_budget(EDGE))  # the old rule refused it
    assert kernel_fits(graph, EDGE)(layer1)  # the code generator runs it without spilling
    partition = reference_fusion(graph, EDGE)
    assert layer1 in partition.groups
    split = Partition([(ops[0],), ops[1:3], *[(i,) for i in ops[3:]]], graph=graph)
    fused = Partition([layer1, *[(i,) for i in ops[3:]]], graph=graph)

    def cycles(p):
        return cs.compile(graph, fusion=lambda g, c: p, simplify=False).report.cycles

    assert cycles(fused) < cycles(split)
    assert cycles(partition) <= cycles(fused)


def test_every_group_of_the_reference_passes_the_code_generators_rule():
    graph = mlp_256_512_512_10(rows=256)
    fits = kernel_fits(graph, EDGE)
    assert all(fits(g) for g in reference_fusion(graph, EDGE).groups)


# -- finding 6: a learner's pass that crashes or returns garbage ---------------------------------
def as_partition(graph, groups):
    """The fusion notebook's helper: groups listed in an order they can run (networkx)."""
    groups = [sorted(g) for g in groups if g]
    owner = {i: k for k, g in enumerate(groups) for i in g}
    index = {node.output: i for i, node in enumerate(graph.nodes)}
    order = nx.DiGraph()
    order.add_nodes_from(range(len(groups)))
    for j, node in enumerate(graph.nodes):
        for v in node.inputs:
            i = index.get(v)
            if i in owner and j in owner and owner[i] != owner[j]:
                order.add_edge(owner[i], owner[j])
    ranked = nx.lexicographical_topological_sort(order, key=lambda k: groups[k][0])
    return Partition([groups[k] for k in ranked], graph=graph)


def diamond():
    """exp feeds relu and add; add also reads relu."""
    b = GraphBuilder()
    t = b.op("exp", b.input((64,), f32, "x"))
    return b.build(b.op("add", t, b.op("relu", t)))


def test_a_non_convex_grouping_through_the_notebook_helper_is_a_chipsim_error():
    graph = diamond()
    exp_i, relu_i, add_i = (i for i, n in enumerate(graph.nodes) if n.op != "constant")

    def my_fusion(graph, chip):
        return as_partition(graph, [[exp_i, add_i], [relu_i]])  # relu leaves and comes back

    with pytest.raises(PassError) as info:
        cs.compile(graph, fusion=my_fusion, simplify=False)
    message = str(info.value)
    assert "fusion pass 'test_a_non_convex_grouping" in message and "my_fusion" in message
    assert "NetworkXUnfeasible" in message
    assert "test_compiler_pipeline.py, line" in message and "in as_partition" in message
    assert isinstance(info.value.__cause__, nx.NetworkXUnfeasible)


def test_a_pass_that_returns_none_is_told_to_return():
    def forgot(graph, chip):
        no_fusion(graph, chip)

    with pytest.raises(PassError, match=r"'.*forgot' returned NoneType \(did you forget `return`"):
        cs.compile(add_mul(), fusion=forgot)


def test_a_crash_points_at_the_learners_line():
    def crashes(graph, chip):
        groups = [[i] for i in range(len(graph.nodes))]
        return groups[99]

    with pytest.raises(PassError) as info:
        cs.compile(add_mul(), fusion=crashes)
    message = str(info.value)
    assert "crashes" in message and "IndexError" in message
    assert "test_compiler_pipeline.py" in message and "return groups[99]" in message


def test_a_chipsim_error_in_a_pass_keeps_its_kind_and_gains_the_pass_name():
    def bad_groups(graph, chip):
        return Partition(["not", "indices"])

    with pytest.raises(PartitionError, match=r"fusion pass '.*bad_groups' failed at .*line \d+"):
        cs.compile(add_mul(), fusion=bad_groups)


def test_an_invalid_partition_names_the_pass_and_the_node():
    def partial(graph, chip):
        return Partition([[i] for i, n in enumerate(graph.nodes) if n.op == "add"])

    with pytest.raises(PartitionError, match=r"fusion pass '.*partial' returned an invalid.* mul"):
        cs.compile(add_mul(), fusion=partial)


def test_a_lambda_is_named_by_its_line():
    with pytest.raises(PassError, match=r"<lambda> \(test_compiler_pipeline.py, line \d+\)"):
        cs.compile(add_mul(), fusion=lambda g, c: None)
