"""The grader's equivalence check: a program matches the interpreter on random inputs, where a
graph that makes NaN or inf (log of a negative number) is matched value for value."""

from __future__ import annotations

import numpy as np
import pytest

import chipsim as cs
from chipsim.ir import interpret
from grader.scoring.equivalence import mismatch, random_inputs


def test_nan_where_the_graph_makes_nan_is_equivalent():
    x = np.zeros((16, 32), np.float32)
    graph = cs.trace(lambda x: cs.ops.log(x) * 2.0 + 1.0, x)
    assert np.isnan(interpret(graph, *random_inputs(graph))[0]).any()  # the case in question
    assert mismatch(graph, cs.compile(graph, chip="edge-npu")) == ""


def test_a_different_program_is_still_caught():
    x = np.zeros((16, 32), np.float32)
    graph = cs.trace(lambda x: cs.ops.log(x) * 2.0 + 1.0, x)
    other = cs.compile(cs.trace(lambda x: cs.ops.log(x) * 3.0 + 1.0, x), chip="edge-npu")
    assert "not numerically equivalent" in mismatch(graph, other)


#: A hidden fusion-epilogue instance (epilogue_variant, stratum 80 of a course secret) whose
#: exp(exp(...)) layers reach 1e35 and overflow float32 on half the output: there two valid
#: summation orders differ by up to 10%, past the tolerances, so before the trusted program
#: widened them every answer, the reference's own partition included, scored 0 on the part.
ILL_CONDITIONED = 2024756568156119141


def _ill_conditioned():
    from grader.problems import families

    return families.epilogue_variant(ILL_CONDITIONED, stratum=80)


def test_every_valid_partition_of_an_ill_conditioned_graph_is_equivalent():
    from grader.problems.families import compile_with
    from grader.scoring.references import fusion_strategy

    graph = _ill_conditioned()
    want = interpret(graph, *random_inputs(graph))[0]
    assert not np.isfinite(want).all()  # the case in question: the output overflows
    reference = compile_with(graph, fusion_strategy("reference", graph))
    assert mismatch(graph, reference) != ""  # the plain tolerances fail even the reference
    for name in ("none", "elementwise", "epilogue", "reference"):
        program = compile_with(graph, fusion_strategy(name, graph))
        assert mismatch(graph, program, lambda: reference) == "", name


@pytest.mark.parametrize("factor", [1.5, 1.3])
def test_a_wrong_program_of_an_ill_conditioned_graph_is_still_caught(factor):
    """Off by half, or by 30% (past the widest tolerance the reference's own rounding may
    open, :data:`~grader.scoring.equivalence.MAX_RTOL`): still not equivalent, from the
    interpreter and from the reference's program alike."""
    from grader.problems.families import compile_with
    from grader.scoring.equivalence import MAX_RTOL
    from grader.scoring.references import fusion_strategy

    assert MAX_RTOL < 0.3
    graph = _ill_conditioned()
    reference = compile_with(graph, fusion_strategy("reference", graph))
    last = graph.nodes[-1]
    assert last.op == "mul"  # the graph's last op scales its output: a wrong one scales more
    scaled = cs.trace(lambda x: x * factor, np.zeros(graph.outputs[0].shape, np.float32))
    wrong = cs.compile(scaled, chip="edge-npu")

    class Composed:  # the reference's outputs, then scaled by ``factor``
        def run(self, *args):
            out, report = reference.run(*args)
            return [wrong.run(out[0])[0][0]], report

    assert "not numerically equivalent" in mismatch(graph, Composed(), lambda: reference)
