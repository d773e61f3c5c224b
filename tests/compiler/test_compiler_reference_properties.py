"""The reference fusion by its promise, in simulated cycles, instead of pinned partitions:
reference (rules + autotuner) <= rules alone, and <= no fusion, on random graphs of
realistic sizes (issue 10, finding 5)."""

from hypothesis import given, settings
from hypothesis import strategies as st

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits
from chipsim.compiler import reference_fusion
from chipsim.passes.fusion import no_fusion, rule_fusion, validate_partition
from chipsim.testing.graphs import REALISTIC_DIMS, random_graph

EDGE = cs.chip("edge-npu")


def cycles(graph, partition) -> int:
    prog = cs.compile(graph, chip=EDGE, fusion=lambda g, c: partition, simplify=False)
    return prog.report.cycles


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1))
def test_reference_is_never_slower_than_its_rules_or_no_fusion(seed: int) -> None:
    graph = random_graph(seed, dims=REALISTIC_DIMS)
    fits = kernel_fits(graph, EDGE)
    reference = reference_fusion(graph, EDGE)
    rules = rule_fusion(graph, EDGE, fits=fits)
    validate_partition(graph, reference)
    assert all(fits(g) for g in reference.groups)  # one capacity rule: the code generator's
    best = cycles(graph, reference)
    assert best <= cycles(graph, rules)
    assert best <= cycles(graph, no_fusion(graph))
