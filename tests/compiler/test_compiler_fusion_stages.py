"""The reference fusion as named stages (REFERENCE_FUSION), and the other modes by their
own names (ESTIMATED_FUSION, the rule pass alone)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from compiler_graphs import attention_head, mlp, small_cnn

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits, kernel_timer
from chipsim.compiler import (
    ESTIMATED_FUSION,
    REFERENCE_FUSION,
    FusionState,
    estimated_fusion,
    reference_fusion,
)
from chipsim.errors import PassError
from chipsim.hw import get_chip
from chipsim.passes.fusion import autotune, no_fusion, rule_fusion

EDGE = get_chip("edge-npu")
GRAPHS = [mlp(), attention_head(), small_cnn()]


def _fields(chip):
    keep = ("name", "launch", "dram", "sram", "simd", "tensor_core", "tensor_flops_per_cycle")
    return SimpleNamespace(**{k: getattr(chip, k) for k in keep})


def test_the_reference_fusion_is_four_named_stages_that_declare_their_data():
    assert REFERENCE_FUSION.names == ["capacity", "rules", "autotune", "best"]
    assert ESTIMATED_FUSION.names == ["estimates", "rules", "autotune"]
    rules, tune, best = REFERENCE_FUSION.stages[1:]
    assert rules.writes == ("partition", "rules") and "fits" in rules.reads
    assert "partition" in tune.reads and tune.writes == ("partition",)
    assert "rules" in best.reads and best.writes == ("partition",)


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.name)
def test_the_stages_are_the_composition_written_out(graph):
    fits, timer = kernel_fits(graph, EDGE), kernel_timer(graph, EDGE)
    by_hand = autotune(graph, EDGE, rule_fusion(graph, EDGE, fits=fits), fits=fits,
                       kernel_cycles=timer)  # fmt: skip
    tuned = REFERENCE_FUSION.until("autotune")(FusionState(graph, EDGE)).partition
    assert tuned.groups == by_hand.groups
    options = {
        p.groups: cs.compile(graph, chip=EDGE, fusion=lambda g, c, p=p: p, simplify=False)
        for p in (by_hand, rule_fusion(graph, EDGE, fits=fits), no_fusion(graph))
    }
    fastest = min(program.report.cycles for program in options.values())
    chosen = reference_fusion(graph, EDGE).groups
    assert chosen in options and options[chosen].report.cycles == fastest
    rules_only = REFERENCE_FUSION.until("rules")(FusionState(graph, EDGE)).partition
    assert rules_only.groups == rule_fusion(graph, EDGE, fits=kernel_fits(graph, EDGE)).groups


@pytest.mark.parametrize("graph", GRAPHS, ids=lambda g: g.name)
def test_the_estimates_and_the_rules_alone_have_names_of_their_own(graph):
    stub = _fields(EDGE)
    assert (
        estimated_fusion(graph, stub).groups
        == autotune(graph, stub, rule_fusion(graph, stub)).groups
    )
    assert estimated_fusion(graph, None).groups == rule_fusion(graph).groups


def test_reference_fusion_refuses_what_is_not_a_chip_and_says_what_to_use():
    with pytest.raises(PassError, match="estimated_fusion"):
        reference_fusion(mlp(), _fields(EDGE))
    with pytest.raises(PassError, match="rule_fusion"):
        reference_fusion(mlp(), None)
