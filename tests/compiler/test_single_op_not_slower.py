"""Compiling never makes a single op slower than running it eagerly (issue 16, item 3).

The compiled program must treat its one input as the eager kernel does, streaming it from
DRAM tile by tile, not first copying it whole on chip.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsim as cs
from chipsim.ir import GraphBuilder, f32
from chipsim.workloads.eager import run_eager

PRESETS = cs.chips() if callable(getattr(cs, "chips", None)) else ["edge-npu"]
UNARY = ["relu", "exp", "neg", "silu", "gelu", "sigmoid", "tanh"]
BINARY = ["add", "mul", "sub", "maximum"]
ROWS = [1, 7, 64, 500, 4096, 20_000]
COLS = [1, 16, 100, 256, 1024]


@st.composite
def single_ops(draw):
    kind = draw(st.sampled_from(["unary", "binary", "sum", "softmax", "matmul", "transpose"]))
    b = GraphBuilder()
    if kind == "matmul":
        m, k, n = (draw(st.sampled_from([16, 64, 256, 1024])) for _ in range(3))
        y = b.op("matmul", b.input((m, k), f32, "a"), b.input((k, n), f32, "b"))
    else:
        shape = (draw(st.sampled_from(ROWS)), draw(st.sampled_from(COLS)))
        x = b.input(shape, f32, "x")
        if kind == "unary":
            y = b.op(draw(st.sampled_from(UNARY)), x)
        elif kind == "binary":
            y = b.op(draw(st.sampled_from(BINARY)), x, b.input(shape, f32, "y"))
        elif kind == "sum":
            y = b.op("sum", x, axes=(-1,))
        elif kind == "softmax":
            y = b.op("softmax", x, axis=-1)
        else:
            y = b.op("transpose", x, perm=(1, 0))
    return b.build(y)


def _cycles(graph, chip):
    zeros = [np.zeros(v.shape, np.float32) for v in graph.inputs]
    compiled = cs.compile(graph, chip=chip).report.cycles
    eager = run_eager(graph, *zeros, chip=chip, functional=False).cycles
    return compiled, eager


@settings(max_examples=40, deadline=None, derandomize=True)
@given(single_ops(), st.sampled_from(sorted(PRESETS)))
def test_a_compiled_single_op_is_never_slower_than_eager(graph, chip):
    compiled, eager = _cycles(graph, chip)
    assert compiled <= eager, (str(graph), chip, compiled, eager)


def test_issue_16_case_matmul_streams_its_input():
    b = GraphBuilder()
    y = b.op("matmul", b.input((8192, 1024), f32, "a"), b.input((1024, 1024), f32, "w"))
    graph = b.build(y)
    prog = cs.compile(graph, chip="datacenter-gpu")
    assert [k.name for k in prog.kernels] == ["matmul"]
    assert "load_inputs" not in [k.name for k in prog.report.kernels]
    compiled, eager = _cycles(graph, "datacenter-gpu")
    assert compiled <= eager
