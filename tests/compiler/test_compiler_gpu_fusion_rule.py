"""Issue 13, fidelity: on a GPU no kernel spans a grid-wide dependency, so the reference fusion
makes the kernels a GPU compiler makes (a matmul with its epilogue, elementwise chains,
reductions with their elementwise neighbours), not whole blocks; chips without SMs keep their
partitions exactly."""

import importlib.util
from pathlib import Path

import pytest
from compiler_graphs import mlp

import chipsim as cs
from chipsim.codegen.feasibility import (
    grid_dependency,
    kernel_fits,
    kernel_timer,
    stand_in_spec,
)
from chipsim.codegen.planning import plan_kernel
from chipsim.compiler import reference_fusion
from chipsim.ir import GraphBuilder, Pattern, f32, get_op
from chipsim.passes.fusion import autotune, rule_fusion
from chipsim.testing.graphs import REALISTIC_DIMS, random_graph
from chipsim.workloads.blocks import cnn_graph

GPU, EDGE = cs.chip("datacenter-gpu"), cs.chip("edge-npu")
_SPEC = importlib.util.spec_from_file_location(
    "sim_gpt2_block", Path(__file__).resolve().parents[2] / "benchmarks" / "sim_gpt2_block.py"
)
_BENCH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_BENCH)
RANDOM_SEEDS = range(40)


def mlp_256_512_512_10():
    return mlp(rows=64, dims=(256, 512, 512, 10))


GRAPHS = {
    "gpt2_block": _BENCH.gpt2_block,
    "mlp_256_512_512_10": mlp_256_512_512_10,
    "cnn": lambda: cnn_graph(0),
}


def _pattern(graph, i):
    return get_op(graph.nodes[i].op).pattern


def _mixes_rows(graph, i):
    node = graph.nodes[i]
    return get_op(node.op).row_inputs([v.type for v in node.inputs], node.type, node.attrs) is None


def _grid_wide(graph, group):
    """The oracle, stated on the IR directly: (producer, consumer) pairs inside one kernel
    where a block of the consumer needs what other blocks of the producer made."""
    made = {graph.nodes[i].output: i for i in group}
    bad = []
    for c in group:
        for v in graph.nodes[c].inputs:
            p = made.get(v)
            if p is None:
                continue
            blocked = _pattern(graph, p) in (Pattern.REDUCTION, Pattern.CONTRACTION)
            if (
                _pattern(graph, c) == Pattern.CONTRACTION  # needs whole rows/columns
                or (_mixes_rows(graph, c) and blocked)  # needs other row blocks
                or (_pattern(graph, c) == Pattern.REDUCTION
                    and _pattern(graph, p) == Pattern.CONTRACTION)  # a row spans column tiles
            ):  # fmt: skip
                bad.append((p, c))
    return bad


def _graphs():
    yield from ((name, build()) for name, build in GRAPHS.items())
    for seed in RANDOM_SEEDS:
        yield f"random_{seed}", random_graph(seed, max_ops=12, dims=REALISTIC_DIMS)


def _cases(n=None):
    return [pytest.param(name, graph, id=name) for name, graph in list(_graphs())[:n]]


@pytest.mark.parametrize(("name", "graph"), _cases())
def test_no_gpu_kernel_spans_a_grid_wide_dependency(name, graph):
    for group in reference_fusion(graph, GPU).groups:
        assert grid_dependency(graph, group) is None, (name, group)
        ops = [graph.nodes[i].op for i in group]
        assert not _grid_wide(graph, group), (name, ops)


def test_gpu_groupings_look_like_a_gpu_compilers():
    graph = mlp_256_512_512_10()
    kernels = [[graph.nodes[i].op for i in g] for g in reference_fusion(graph, GPU).groups]
    assert kernels == [["matmul", "add", "relu"], ["matmul", "add", "relu"], ["matmul", "add"]]
    graph = _BENCH.gpt2_block()
    groups = reference_fusion(graph, GPU).groups
    contractions = sum(_pattern(graph, i) == Pattern.CONTRACTION for i in range(len(graph.nodes)))
    assert len(groups) >= contractions == 8  # one kernel per matmul at least
    for g in groups:
        assert sum(_pattern(graph, i) == Pattern.CONTRACTION for i in g) <= 1


@pytest.mark.parametrize(
    ("build", "verdict"),
    [
        (lambda b, x, w: b.op("relu", b.op("add", b.op("matmul", x, w), b.const(1.0))), None),
        (lambda b, x, w: b.op("matmul", b.op("layernorm", x), w), (0, 1)),
        (lambda b, x, w: b.op("softmax", b.op("matmul", x, w)), (0, 1)),
        (lambda b, x, w: b.op("mul", b.op("softmax", x), b.const(2.0)), None),
        (lambda b, x, w: b.op("transpose", b.op("exp", x)), None),  # each block its elements
        (lambda b, x, w: b.op("transpose", b.op("softmax", x)), (0, 1)),
        (lambda b, x, w: b.op("sum", b.op("exp", x), axes=(0,)), None),
        (lambda b, x, w: b.op("sum", b.op("softmax", x), axes=(0,)), (0, 1)),
    ],
    ids=["epilogue", "prologue", "matmul_softmax", "softmax_mul", "exp_T", "softmax_T",
         "exp_colsum", "softmax_colsum"],
)  # fmt: skip
def test_grid_dependency_names_the_pair_that_needs_a_grid_barrier(build, verdict):
    b = GraphBuilder()
    x, w = b.input((256, 512), f32), b.input((512, 512), f32)
    graph = b.build(build(b, x, w))
    ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    expected = None if verdict is None else (ops[verdict[0]], ops[verdict[1]])
    assert grid_dependency(graph, ops) == expected


def _without_grid_rule(graph, chip):
    """The reference fusion with the capacity rule alone (no GPU rule), built by hand."""

    def fits(group):
        spec = stand_in_spec(graph, chip, sorted(group), on_chip=False)
        return plan_kernel(spec, chip).mode != "spill"

    partition = rule_fusion(graph, chip, fits=fits)
    return autotune(graph, chip, partition, fits=fits, kernel_cycles=kernel_timer(graph, chip))


@pytest.mark.parametrize(("name", "graph"), _cases(15))
def test_edge_npu_partitions_do_not_change(name, graph):
    assert reference_fusion(graph, EDGE).groups == _without_grid_rule(graph, EDGE).groups


def test_the_rule_applies_only_to_chips_with_sms():
    graph = mlp(rows=16, dims=(32, 64, 64, 16))
    whole = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    assert grid_dependency(graph, whole) is not None
    assert kernel_fits(graph, EDGE)(whole) and not kernel_fits(graph, GPU)(whole)
    assert EDGE.sm.count == 0 < GPU.sm.count
    assert len(reference_fusion(graph, GPU).groups) == 3


def test_a_learners_partition_that_needs_a_grid_wide_barrier_is_refused_on_the_gpu():
    """Any fusion pass, not only the reference, is held to the rule on a GPU: one kernel for
    the whole MLP is refused with the two nodes named; the same partition compiles on edge-npu,
    and the reference's partition compiles on the GPU."""
    from chipsim.errors import PartitionError
    from chipsim.passes.fusion import Partition

    graph = mlp_256_512_512_10()
    ops = tuple(i for i, n in enumerate(graph.nodes) if n.op != "constant")
    everything = Partition((ops,))
    with pytest.raises(PartitionError) as err:
        cs.compile(graph, chip=GPU, fusion=lambda g, c: everything, simplify=False)
    message = str(err.value)
    producer, reader = grid_dependency(graph, everything.groups[0])
    names = graph.names()
    assert f"{names[graph.nodes[reader].output]} = matmul" in message
    assert names[graph.nodes[producer].output] in message
    assert "datacenter-gpu" in message and "different groups" in message
    cs.compile(graph, chip=EDGE, fusion=lambda g, c: everything, simplify=False)
    cs.compile(graph, chip=GPU)  # the reference obeys the rule
