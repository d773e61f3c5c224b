"""The exhaustive enumerator of valid partitions."""

from __future__ import annotations

import math

import pytest

from chipsim.errors import PassError
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.fusion import (
    all_partitions,
    count_partitions,
    rule_fusion,
    validate_partition,
)
from chipsim.testing.graphs import random_graph

from . import graphs as G


def chain(n: int):
    b = GraphBuilder()
    x = b.input((4,), f32)
    for _ in range(n):
        x = b.op("relu", x)
    return b.build(x)


def test_a_chain_has_two_to_the_n_minus_one_partitions() -> None:
    assert count_partitions(chain(5)) == 2**4
    assert count_partitions(chain(12)) == 2**11


def test_two_independent_ops_are_never_grouped() -> None:
    b = GraphBuilder()
    x = b.input((4,), f32)
    g = b.build(b.op("exp", x), b.op("neg", x))
    assert [p.groups for p in all_partitions(g)] == [((0,), (1,))]


def test_diamond_partitions_are_exactly_the_convex_ones() -> None:
    found = {p.groups for p in all_partitions(G.elementwise_diamond())}
    # ops 0 exp, 2 mul, 3 relu, 4 add (1 is a constant). Of the 15 set partitions, 5 are
    # out: {mul, relu} is disconnected, {exp, add} too, {exp, mul, add} skips relu (not convex)
    assert ((0, 4), (2,), (3,)) not in found
    assert ((0, 2, 3, 4),) in found
    assert len(found) == 10


def test_every_enumerated_partition_is_valid_and_unique_and_limit_works() -> None:
    g = random_graph(3)
    parts = list(all_partitions(g))
    for p in parts:
        validate_partition(g, p)
    assert len({p.groups for p in parts}) == len(parts)
    assert len(list(all_partitions(g, limit=5))) == 5
    assert rule_fusion(g).groups in {p.groups for p in parts}


def test_twelve_op_graphs_enumerate() -> None:
    sizes = [count_partitions(random_graph(s, min_ops=12)) for s in range(5)]
    assert all(0 < n < math.inf for n in sizes)


def test_too_many_ops_is_refused() -> None:
    with pytest.raises(PassError, match="at most 16 ops"):
        next(all_partitions(chain(17)))
