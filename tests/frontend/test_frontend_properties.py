"""Property: for random programs, eager == traced == JSON round trip == simplified graphs."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsim as cs
from chipsim.ir.serialize import graph_from_json, graph_to_json
from chipsim.passes.simplify import cse, dce, fold_constants, simplify

STEP = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(["exp", "tanh", "sigmoid", "relu", "gelu", "neg"])),
    st.tuples(
        st.just("scalar"),
        st.sampled_from(["add", "sub", "mul", "div", "maximum"]),
        st.sampled_from([0.5, 2.0, -1.0]),
        st.booleans(),
    ),
    st.tuples(st.just("binary"), st.sampled_from(["add", "sub", "mul", "minimum"])),
    st.tuples(st.just("matmul")),
    st.tuples(
        st.just("reduce"), st.sampled_from(["sum", "max", "mean"]), st.sampled_from([0, 1, -1, -2])
    ),
    st.tuples(st.just("softmax"), st.sampled_from([0, -1])),
    st.tuples(st.just("where"), st.sampled_from([0.0, 0.5])),
    st.tuples(st.just("mask")),
    st.tuples(st.just("lowp"), st.sampled_from(["f16", "bf16"])),
    st.tuples(st.just("layernorm")),
    st.tuples(st.just("concat_slice")),
    st.tuples(st.just("dup")),
    st.tuples(st.just("dead")),
)


def make_program(steps, two_outputs):
    """A Python function of (x, w) built from ``steps``, using only the public API."""

    def program(x, w):
        h = x
        for step in steps:
            kind = step[0]
            if kind == "unary":
                h = getattr(cs.ops, step[1])(h)
            elif kind == "scalar":
                _, op, c, flip = step
                h = getattr(cs.ops, op)(c, h) if flip and op != "div" else getattr(cs.ops, op)(h, c)
            elif kind == "binary":
                h = getattr(cs.ops, step[1])(h, x)
            elif kind == "matmul":
                h = cs.ops.tanh(h @ w)
            elif kind == "reduce":
                h = h - getattr(cs.ops, step[1])(h, step[2], keepdims=True)
            elif kind == "softmax":
                h = cs.ops.softmax(h, step[1])
            elif kind == "where":
                h = cs.ops.where(h > step[1], h, x)
            elif kind == "mask":
                h = cs.ops.cast(h < 0, "f32") * h
            elif kind == "lowp":
                h = (h.astype(step[1]) * 3.0).astype("f32")
            elif kind == "layernorm":
                h = cs.ops.layernorm(h)
            elif kind == "concat_slice":
                both = cs.ops.concat([h, x], axis=0)
                h = cs.ops.slice(both, (0, 0), (h.shape[0], h.shape[1]), (1, 1))
            elif kind == "dup":
                h = h * 0.5 + h * 0.5
            elif kind == "dead":
                _unused = cs.ops.exp(h) + 1.0  # noqa: F841 - dead code for dce to remove
        return (h, h.sum()) if two_outputs else h

    return program


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(STEP, min_size=1, max_size=5),
    m=st.integers(1, 3),
    n=st.integers(1, 3),
    two_outputs=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_eager_traced_json_and_simplified_agree(steps, m, n, two_outputs, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.standard_normal((n, n)).astype(np.float32)
    program = make_program(steps, two_outputs)
    with np.errstate(all="ignore"):
        eager = program(cs.tensor(x), cs.tensor(w))
        eager = [t.numpy() for t in (eager if two_outputs else (eager,))]
        graph = cs.trace(program, x, w)
        traced = cs.interpret(graph, x, w)
        for a, b in zip(eager, traced, strict=True):
            _close(a, b)
            assert a.dtype == b.dtype and a.shape == b.shape
        back = graph_from_json(graph_to_json(graph))
        assert str(back) == str(graph)
        for a, b in zip(traced, cs.interpret(back, x, w), strict=True):
            _close(a, b)
        for p in (simplify, dce, cse, fold_constants):
            g2 = cs.verify(p(graph))
            assert len(g2.nodes) <= len(graph.nodes)
            for a, b in zip(traced, cs.interpret(g2, x, w), strict=True):
                _close(a, b)
        if ("dead",) in steps:
            assert len(dce(graph).nodes) < len(graph.nodes)
        if ("dup",) in steps:
            assert len(cse(graph).nodes) < len(graph.nodes)


def test_eager_ops_each_run_as_one_kernel():
    dev = cs.HostDevice()
    with dev:
        x = cs.tensor([1.0, -2.0])
        y = cs.ops.relu(x * 2.0 + 1.0)
    assert [k.op for k in dev.kernels] == ["mul", "add", "relu"]
    assert str(dev.kernels[0]) == "mul_kernel(f32[2], f32[]) -> f32[2]"
    assert y.device is dev and y.numpy().tolist() == [3.0, 0.0]
    assert cs.current_device() is not dev


def test_numpy_operands_and_reflected_operators():
    x = cs.tensor(np.array([1.0, 2.0], np.float16))
    y = np.array([0.5, 0.25], np.float16) + x  # numpy defers to the tensor
    assert isinstance(y, cs.Tensor) and y.dtype == cs.f16
    g = cs.trace(lambda t: np.array([0.5, 0.25], np.float16) + t, np.ones(2, np.float16))
    assert g.outputs[0].dtype == cs.f16
    np.testing.assert_array_equal(g(np.array([1.0, 2.0], np.float16)), y.numpy())
    assert (2.0 - cs.tensor([1.0])).numpy().tolist() == [1.0]
    assert (1.0 / cs.tensor([4.0])).numpy().tolist() == [0.25]
