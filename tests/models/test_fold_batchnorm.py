"""fold_batchnorm: the folded graph computes the same function with the batch norms gone."""

import numpy as np
import pytest

import chipsim as cs
from chipsim.ir import GraphBuilder, f32, interpret, verify
from chipsim.passes.fold_batchnorm import fold_batchnorm

RNG = np.random.default_rng(3)


def _bn_params(b, c):
    return [
        b.const((RNG.random(c) + 0.5).astype(np.float32)),
        b.const(RNG.standard_normal(c).astype(np.float32)),
        b.const(RNG.standard_normal(c).astype(np.float32)),
        b.const((RNG.random(c) + 0.1).astype(np.float32)),
    ]


@pytest.mark.parametrize(("op", "cin", "wshape", "attrs"), [
    ("conv2d", 3, (3, 3, 3, 8), {"stride": 2, "padding": 1}),
    ("grouped_conv2d", 8, (3, 3, 1, 8), {"groups": 8, "padding": "same"}),
    ("matmul", 6, (6, 8), {}),
])  # fmt: skip
def test_folding_preserves_results_and_removes_the_batch_norm(op, cin, wshape, attrs):
    b = GraphBuilder()
    x = b.input((2, 6, 6, cin) if op != "matmul" else (5, cin), f32)
    w = b.const(RNG.standard_normal(wshape).astype(np.float32))
    y = b.op("batch_norm", b.op(op, x, w, **attrs), *_bn_params(b, 8), eps=1e-3)
    out = b.op("relu", y)
    graph = b.build(out)
    folded = verify(fold_batchnorm(graph))
    ops = [n.op for n in folded.nodes if n.op != "constant"]
    assert ops == [op, "add", "relu"]
    xv = RNG.standard_normal(x.shape).astype(np.float32)
    np.testing.assert_allclose(interpret(folded, xv)[0], interpret(graph, xv)[0],
                               rtol=1e-4, atol=1e-4)  # fmt: skip


def test_a_batch_norm_whose_conv_is_read_elsewhere_is_kept():
    b = GraphBuilder()
    x = b.input((1, 5, 5, 2), f32)
    c = b.op("conv2d", x, b.const(RNG.standard_normal((3, 3, 2, 4)).astype(np.float32)))
    y = b.op("batch_norm", c, *_bn_params(b, 4))
    graph = b.build(y, c)  # the conv's own result is an output too: folding would change it
    assert fold_batchnorm(graph) is graph


def test_folded_graph_compiles_and_runs_like_the_original():
    b = GraphBuilder()
    x = b.input((2, 8, 8, 4), f32)
    w = b.const(RNG.standard_normal((3, 3, 4, 8)).astype(np.float32))
    y = b.op("relu", b.op("batch_norm", b.op("conv2d", x, w, padding=1), *_bn_params(b, 8)))
    graph = b.build(y)
    xv = RNG.standard_normal(x.shape).astype(np.float32)
    program = cs.compile(fold_batchnorm(graph), cs.chip("edge-npu"))
    got = program(xv)
    got = got[0] if isinstance(got, (tuple, list)) else got
    np.testing.assert_allclose(np.asarray(got), interpret(graph, xv)[0], rtol=1e-4, atol=1e-4)
