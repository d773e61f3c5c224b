"""The rule pass keeps TVM Relax FuseOps' grouping on the issue's graphs, and its extra
strength on a reduction followed by elementwise ops (issue 10). The TVM groups below were
printed by ``benchmarks/fusion_vs_tvm.py`` (apache-tvm 0.27.0.post1, in its own venv)."""

import importlib.util
from pathlib import Path

import pytest

import chipsim as cs
from chipsim.codegen.feasibility import kernel_fits
from chipsim.compiler import reference_fusion
from chipsim.passes.fusion import rule_fusion

SPEC = importlib.util.spec_from_file_location(
    "fusion_vs_tvm", Path(__file__).resolve().parents[2] / "benchmarks" / "fusion_vs_tvm.py"
)
BENCH = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(BENCH)
EDGE = cs.chip("edge-npu")

TVM_GROUPS = {
    "mlp": [(1, 3, 4), (6, 8, 9), (11, 13)],
    "diamond": [(1, 2, 4, 5)],
    "reduce_then_elementwise": [(0, 1), (3, 5)],
}


@pytest.mark.parametrize("name", ["mlp", "diamond"])
def test_the_rules_make_tvms_groups(name):
    graph = getattr(BENCH, name)()
    rules = rule_fusion(graph, EDGE, fits=kernel_fits(graph, EDGE))
    assert sorted(rules.groups) == TVM_GROUPS[name]
    assert sorted(reference_fusion(graph, EDGE).groups) == TVM_GROUPS[name]


def test_a_reduction_keeps_its_elementwise_epilogue_where_tvm_splits():
    graph = BENCH.reduce_then_elementwise()
    rules = rule_fusion(graph, EDGE, fits=kernel_fits(graph, EDGE))
    assert len(rules) == 1 < len(TVM_GROUPS["reduce_then_elementwise"])


@pytest.mark.parametrize("name", ["mlp", "diamond"])
def test_on_the_gpu_the_reference_fusion_makes_tvms_groups(name):
    """Issue 13: with the GPU's grid-wide rule, no more mega-kernels than TVM makes."""
    graph = getattr(BENCH, name)()
    assert sorted(reference_fusion(graph, "datacenter-gpu").groups) == TVM_GROUPS[name]
