"""Hypothesis properties of the reference pass over random small graphs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.ir import verify
from chipsim.passes.fusion import (
    Partition,
    autotune,
    no_fusion,
    rule_fusion,
    validate_partition,
    working_set_bytes,
)
from chipsim.passes.fusion.reference import fuse_elementwise_chains
from chipsim.passes.fusion.rules import COST, can_fuse, group_pattern
from chipsim.testing.graphs import REALISTIC_DIMS, random_graph

seeds = st.integers(min_value=0, max_value=2**32 - 1)


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_generated_graphs_are_valid_and_small(seed: int) -> None:
    g = random_graph(seed)
    verify(g)
    assert 1 <= sum(n.op != "constant" for n in g.nodes) <= 12


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_reference_fusion_is_valid_and_round_trips(seed: int) -> None:
    g = random_graph(seed)
    for partition in (rule_fusion(g), no_fusion(g), fuse_elementwise_chains(g)):
        validate_partition(g, partition)
        assert Partition.from_json(partition.to_json()) == partition


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_no_group_mixes_two_heavy_ops_without_a_chip(seed: int) -> None:
    g = random_graph(seed)  # no chip: rule rounds only, no cost-aware merges
    for group in rule_fusion(g).groups:
        heavy = [i for i in group if group_pattern([g.nodes[i].op]) >= 3]  # reduction or more
        assert len(heavy) <= 1, [g.nodes[i].op for i in group]


@settings(max_examples=100, deadline=None)
@given(seeds, st.sampled_from([64, 512, 2048, 8192]))
def test_tiny_sram_groups_fit_or_are_single_ops(seed: int, budget: int) -> None:
    g = random_graph(seed)
    partition = rule_fusion(g, sram_budget=budget)
    validate_partition(g, partition)
    for group in partition.groups:
        assert len(group) == 1 or working_set_bytes(g, group, 1) <= budget


def test_rule_table_examples() -> None:
    from chipsim.ir import Pattern as P

    assert can_fuse(P.ELEMENTWISE, P.REDUCTION)
    assert can_fuse(P.REDUCTION, P.ELEMENTWISE)
    assert can_fuse(P.REDUCTION, P.INJECTIVE, round=2)  # mean then reshape
    assert can_fuse(P.REDUCTION, P.CONTRACTION, round=COST)  # only when the estimate says so
    assert not can_fuse(P.REDUCTION, P.CONTRACTION, round=2)
    assert not can_fuse(P.CONTRACTION, P.CONTRACTION, round=1)
    assert can_fuse(P.CONTRACTION, P.CONTRACTION, round=COST)  # layer fusion, if it pays
    assert not any(can_fuse(P.OPAQUE, c) or can_fuse(c, P.OPAQUE) for c in P)


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_cost_step_never_raises_the_estimate_and_layer_fusion_fits(seed: int) -> None:
    from chipsim.hw import get_chip
    from chipsim.passes.fusion.cost import kernel_budget, kernel_cycles, mixes_rows

    chip = get_chip("edge-npu")
    g = random_graph(seed, dims=REALISTIC_DIMS)
    with_cost, rules_only = autotune(g, chip, rule_fusion(g, chip)), rule_fusion(g, chip)
    validate_partition(g, with_cost)
    estimate = sum(kernel_cycles(g, group, chip) for group in with_cost.groups)
    assert estimate <= sum(kernel_cycles(g, group, chip) for group in rules_only.groups)
    for group in with_cost.groups:
        if sum(group_pattern([g.nodes[i].op]) == 4 for i in group) > 1:  # contractions
            # two contractions in one kernel: it must row-tile within the kernels' SRAM
            assert not any(mixes_rows(g, i) for i in group)
            assert working_set_bytes(g, group, 1) <= kernel_budget(chip)
