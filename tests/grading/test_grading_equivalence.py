"""The grader's equivalence check: a program matches the interpreter on random inputs, where a
graph that makes NaN or inf (log of a negative number) is matched value for value."""

from __future__ import annotations

import numpy as np

import chipsim as cs
from chipsim.ir import interpret
from grader.scoring.checks import _mismatch, random_inputs


def test_nan_where_the_graph_makes_nan_is_equivalent():
    x = np.zeros((16, 32), np.float32)
    graph = cs.trace(lambda x: cs.ops.log(x) * 2.0 + 1.0, x)
    assert np.isnan(interpret(graph, *random_inputs(graph))[0]).any()  # the case in question
    assert _mismatch(graph, cs.compile(graph, chip="edge-npu")) == ""


def test_a_different_program_is_still_caught():
    x = np.zeros((16, 32), np.float32)
    graph = cs.trace(lambda x: cs.ops.log(x) * 2.0 + 1.0, x)
    other = cs.compile(cs.trace(lambda x: cs.ops.log(x) * 3.0 + 1.0, x), chip="edge-npu")
    assert "not numerically equivalent" in _mismatch(graph, other)
