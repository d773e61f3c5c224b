"""The Partition data structure, its JSON form and every validator message."""

from __future__ import annotations

import pytest

from chipsim.errors import PartitionError, PassError, SerializationError
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.fusion import (
    Partition,
    no_fusion,
    validate_partition,
)
from chipsim.passes.fusion.naming import kernel_name

from . import graphs as G


def chain():
    """%1 = neg(%0); %2 = exp(%1); %3 = relu(%2), plus a side path %1 -> %4 = tanh -> %5 = add."""
    b = GraphBuilder()
    x = b.input((4, 8), f32)
    a = b.op("neg", x)  # node 0, %1
    e = b.op("exp", a)  # node 1, %2
    r = b.op("relu", e)  # node 2, %3
    t = b.op("tanh", a)  # node 3, %4
    return b.build(b.op("add", r, t))  # node 4, %5


def test_groups_are_normalised_and_frozen() -> None:
    p = Partition([[1, 0], [2]])
    assert p.groups == ((0, 1), (2,))
    with pytest.raises(AttributeError):
        p.groups = ()  # type: ignore[misc]
    assert p == Partition(((0, 1), (2,)))
    assert hash(p) == hash(Partition(((0, 1), (2,))))


def test_str_without_and_with_graph() -> None:
    p = Partition([[0, 1, 2], [3], [4]])
    assert str(p) == "group 0: nodes 0 1 2\ngroup 1: nodes 3\ngroup 2: nodes 4"
    assert str(p.with_graph(chain())) == "fused_neg_exp_relu: %1 %2 %3\ntanh: %4\nadd: %5"


def test_json_round_trip_and_form() -> None:
    p = Partition([[0, 1], [2, 3, 4]])
    text = p.to_json()
    assert text == '{"format": "chipsim.partition", "version": 1, "groups": [[0, 1], [2, 3, 4]]}'
    assert Partition.from_json(text) == p


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "must be JSON"),
        ('{"groups": [[0]]}', '"format"'),
        ('{"format": "chipsim.partition", "version": 2, "groups": []}', "version 2"),
        ('{"format": "chipsim.partition", "version": 1, "groups": [[true]]}', "not a node index"),
        ('{"format": "chipsim.partition", "version": 1, "groups": {"a": 1}}', '"groups"'),
    ],
)
def test_from_json_rejects_malformed(text: str, fragment: str) -> None:
    with pytest.raises(SerializationError, match=fragment):
        Partition.from_json(text)


def test_kernel_name_skips_constants() -> None:
    g = G.linear_relu()  # nodes: const, matmul, const, add, relu
    assert kernel_name(g, (0, 1, 2, 3, 4)) == "fused_matmul_add_relu"
    assert kernel_name(g, (1,)) == "matmul"


# -- validator: one test per error kind, each message names the nodes --------------------------
def check(partition: Partition, *fragments: str) -> None:
    with pytest.raises(PartitionError) as info:
        validate_partition(chain(), partition)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_valid_partition_passes() -> None:
    validate_partition(chain(), Partition([[0, 1, 2, 3, 4]]))
    validate_partition(chain(), Partition([[0], [3], [1, 2, 4]]))


def test_node_in_no_group() -> None:
    check(Partition([[0, 1, 2], [4]]), "%4 = tanh (node 3)", "in no group")


def test_node_in_two_groups() -> None:
    check(Partition([[0, 1], [1, 2, 3, 4]]), "%2 = exp (node 1) is in group 0 and in group 1")


def test_index_out_of_range() -> None:
    check(Partition([[0, 1, 2, 3, 4, 9]]), "node index 9", "5 nodes (indices 0..4)")


def test_constant_in_a_group() -> None:
    with pytest.raises(PartitionError, match=r"%1 = constant \(node 0\): constants are data"):
        validate_partition(G.add_mul(), Partition([[0, 1, 3]]))


def test_empty_group() -> None:
    check(Partition([[0, 1, 2, 3, 4], []]), "group 1 is empty")


def test_non_convex_group() -> None:
    # {%1, %2, %3, %5} without %4 = tanh: the path %1 -> %4 -> %5 leaves the group and comes back
    check(
        Partition([[0, 1, 2, 4], [3]]),
        "group 0 (fused_neg_exp_relu_add) is not convex",
        "%1 = neg -> %4 = tanh -> %5 = add",
        "leaves the group at %4 = tanh",
    )


def test_groups_in_a_cycle() -> None:
    # two convex groups that need each other: {neg, mul} and {exp, add}
    b = GraphBuilder()
    x = b.input((4,), f32)
    a = b.op("neg", x)  # node 0, %1
    c = b.op("exp", x)  # node 1, %2
    bb = b.op("add", a, c)  # node 2, %3  (a -> bb, c -> bb)
    d = b.op("mul", c, c)  # node 3, %4
    e = b.op("relu", bb)  # node 4, %5
    g = b.build(b.op("add", e, d))  # node 5, %6
    # groups {a=%1, d=%4} and {c=%2, bb=%3}: %2 -> %4 and %1 -> %3 in opposite directions
    with pytest.raises(PartitionError) as info:
        validate_partition(g, Partition([[0, 3], [1, 2], [4, 5]]))
    message = str(info.value)
    assert "depend on each other in a cycle" in message
    assert "group 0 -> group 1 via %1 = neg -> %3 = add" in message
    assert "group 1 -> group 0 via %2 = exp -> %4 = mul" in message


def test_groups_out_of_order() -> None:
    check(
        Partition([[3], [1, 2, 4], [0]]),
        "group 1 is listed before group 2",
        "%2 = exp in group 1 reads %1 = neg from group 2",
    )


# -- registry ---------------------------------------------------------------------------------
def test_registry_and_get_fusion() -> None:
    from chipsim.compiler import FUSION_PASSES, get_fusion, reference_fusion

    assert FUSION_PASSES["reference"] is reference_fusion
    assert get_fusion(None) is no_fusion
    assert get_fusion("none") is no_fusion
    mine = lambda graph, chip=None: no_fusion(graph)  # noqa: E731
    assert get_fusion(mine) is mine
    with pytest.raises(PassError, match="'reference', 'none'"):
        get_fusion("fastest")


def test_no_fusion_is_one_op_per_group() -> None:
    g = G.linear_relu()
    assert no_fusion(g).groups == ((1,), (3,), (4,))
    assert str(no_fusion(g)) == "matmul: %2\nadd: %4\nrelu: %5"


def test_the_local_convexity_walk_agrees_with_the_definition() -> None:
    """``is_convex`` walks only near the group; the definition looks at the whole DAG: some
    node that a member reaches and that reaches a member, outside the group."""
    import itertools
    import random

    import networkx as nx

    from chipsim.passes.fusion.partition import is_convex

    def by_definition(dag, group):
        members = set(group)
        out = set().union(*(nx.descendants(dag, i) for i in group)) - members
        return not any(nx.has_path(dag, o, i) for o in out for i in group)

    rng = random.Random(0)
    for _ in range(30):
        n = 9
        dag = nx.DiGraph()
        dag.add_nodes_from(range(n))
        dag.add_edges_from(
            (a, b) for a, b in itertools.combinations(range(n), 2) if rng.random() < 0.3
        )
        for size in (1, 2, 3, 4):
            for group in itertools.combinations(range(n), size):
                assert is_convex(dag, group) == by_definition(dag, group), (
                    sorted(dag.edges),
                    group,
                )
