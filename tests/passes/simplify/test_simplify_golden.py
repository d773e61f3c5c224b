"""Golden before/after tests for dce, cse and fold_constants, and the Pipeline's errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsim as cs
from chipsim.passes.pipeline import Pipeline
from chipsim.passes.simplify import FOLD_LIMIT_ELEMENTS, cse, dce, fold_constants, simplify


def _dedent(text: str) -> str:
    return "\n".join(line[8:] for line in text.strip("\n").splitlines())


def test_dce_golden():
    b = cs.GraphBuilder()
    x = b.input((4,))
    b.op("exp", x)  # dead
    y = b.op("neg", x)
    b.op("tanh", y)  # dead, uses a live value
    g = b.build(b.op("relu", y))
    assert str(g) == _dedent("""
        graph(%0: f32[4]) {
          %1 = exp(%0) : f32[4]
          %2 = neg(%0) : f32[4]
          %3 = tanh(%2) : f32[4]
          %4 = relu(%2) : f32[4]
          return %4
        }""")
    assert str(dce(g)) == _dedent("""
        graph(%0: f32[4]) {
          %1 = neg(%0) : f32[4]
          %2 = relu(%1) : f32[4]
          return %2
        }""")


def test_dce_keeps_unused_inputs_and_input_outputs():
    b = cs.GraphBuilder()
    x, y = b.input((2,)), b.input((2,))
    b.op("exp", y)
    g = dce(b.build(x))
    assert g.nodes == () and g.inputs == (x, y) and g.outputs == (x,)


def test_cse_golden():
    b = cs.GraphBuilder()
    x = b.input((4,))
    a1 = b.op("mul", x, b.const(2.0))
    a2 = b.op("mul", x, b.const(2.0))
    s1 = b.op("sum", a1, axes=(0,))
    s2 = b.op("sum", a2, axes=(0,))
    s3 = b.op("sum", a2, axes=(0,), keepdims=True)  # different attrs: kept
    g = b.build(b.op("add", s1, s2), s3)
    assert str(cse(g)) == _dedent("""
        graph(%0: f32[4]) {
          %1 = constant(2.0) : f32[]
          %2 = mul(%0, %1) : f32[4]
          %3 = sum(%2) {axes=(0,)} : f32[]
          %4 = sum(%2) {axes=(0,), keepdims=True} : f32[1]
          %5 = add(%3, %3) : f32[]
          return %5, %4
        }""")


def test_cse_keeps_constants_of_different_dtype_apart():
    b = cs.GraphBuilder()
    c1 = b.const(np.array([1.0, 2.0], np.float32))
    c2 = b.const(np.array([1.0, 2.0], np.float32), "bf16")
    c3 = b.const(np.array([1.0, 2.0], np.float32))
    g = cse(b.build(c1, c2, c3))
    assert len(g.nodes) == 2 and g.outputs[0] is g.outputs[2]


def test_cse_merges_constants_by_value_only():
    """Constants are compared by their bytes within their type (not hashed): equal weights
    merge, weights of the same type with other values or other shapes stay apart."""
    b = cs.GraphBuilder()
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    same, other = b.const(w), b.const(w + 1)
    again, flat = b.const(w.copy()), b.const(w.reshape(6))
    g = cse(b.build(same, other, again, flat))
    out = g.outputs
    assert len(g.nodes) == 3 and out[0] is out[2]
    assert len({id(out[0]), id(out[1]), id(out[3])}) == 3


def test_fold_constants_golden():
    b = cs.GraphBuilder()
    x = b.input((2,))
    c = b.op("exp", b.const(np.array([0.0, 0.0], np.float32)))
    k = b.op("mul", c, b.const(3.0))
    g = b.build(b.op("add", x, k))
    assert str(fold_constants(g)) == _dedent("""
        graph(%0: f32[2]) {
          %1 = constant(<f32[2] constant>) : f32[2]
          %2 = add(%0, %1) : f32[2]
          return %2
        }""")
    folded = fold_constants(g)
    assert folded.nodes[0].attrs["value"].array().tolist() == [3.0, 3.0]
    assert folded(np.array([1.0, 2.0], np.float32)).tolist() == [4.0, 5.0]


def test_fold_constants_keeps_dtype_and_bf16_rounding():
    b = cs.GraphBuilder()
    one = b.const(np.array([1.0], np.float32), "bf16")
    g = b.build(b.op("div", one, b.const(3.0, "bf16")))
    folded = fold_constants(g)
    assert [n.op for n in folded.nodes] == ["constant"]
    assert folded.outputs[0].dtype == cs.bf16
    assert folded().tolist() == g().tolist() == [0.333984375]


def test_fold_constants_respects_the_size_limit():
    b = cs.GraphBuilder()
    big = b.op("broadcast_to", b.const(1.0), shape=(FOLD_LIMIT_ELEMENTS + 1,))
    small = b.op("broadcast_to", b.const(1.0), shape=(8,))
    g = fold_constants(b.build(big, small))
    assert [n.op for n in g.nodes] == ["constant", "broadcast_to", "constant"]


def test_simplify_golden():
    def f(x):
        unused = x.exp()  # noqa: F841
        return x * (np.float32(2.0) + 0) + x * (np.float32(2.0) + 0)

    g = cs.trace(f, np.zeros(3, np.float32))
    assert str(simplify(g)) == _dedent("""
        f(%0: f32[3]) {
          %1 = constant(2.0) : f32[]
          %2 = mul(%0, %1) : f32[3]
          %3 = add(%2, %2) : f32[3]
          return %3
        }""")


# -- the Pipeline ----------------------------------------------------------------------------
def broken(graph):
    """A pass that produces IR the verifier rejects (a dangling output)."""
    b = cs.GraphBuilder()
    ghost = b.input((1,))
    return graph.replace(outputs=(ghost,))


def crashing(graph):
    return {}["oops"]


def _graph():
    b = cs.GraphBuilder()
    x = b.input((2,))
    return b.build(b.op("exp", x))


def test_pipeline_names_the_failing_pass_and_those_before():
    with pytest.raises(cs.PassError) as info:
        Pipeline([dce, cse, broken, fold_constants])(_graph())
    msg = str(info.value)
    assert msg.startswith("pass 'broken' failed after ['dce', 'cse']: ")
    assert "is dangling" in msg and ">>" in msg


def test_pipeline_wraps_a_crash_too():
    with pytest.raises(cs.PassError, match=r"pass 'crashing' failed after \[\]: KeyError"):
        Pipeline([crashing])(_graph())


def test_pipeline_without_verification_and_instruments():
    seen = []
    out = Pipeline([dce, broken], verify_each=False, instruments=[lambda n, g: seen.append(n)])(
        _graph()
    )
    assert seen == ["dce", "broken"] and len(out.nodes) == 1
    assert Pipeline([fold_constants, cse, dce]).names == ["fold_constants", "cse", "dce"]


def test_print_after_instrument(capsys):
    from chipsim.passes.pipeline import print_after

    Pipeline([dce], instruments=[print_after])(_graph())
    assert capsys.readouterr().out.startswith("--- after dce ---\ngraph(%0: f32[2]) {")


# -- properties on graphs rich in constants and duplicates -------------------------------------
@st.composite
def const_heavy_graphs(draw):
    b = cs.GraphBuilder()
    x = b.input((2, 3))
    pool = [x, b.const(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))]
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["const", "unary", "binary", "reduce", "cast", "dup"]))
        v = draw(st.sampled_from(pool))
        if kind == "const":
            out = b.const(
                draw(st.sampled_from([0.5, 2.0, -1.0])), draw(st.sampled_from(["f32", None]))
            )
        elif kind == "unary":
            out = b.op(draw(st.sampled_from(["exp", "tanh", "neg", "relu"])), v)
        elif kind == "binary":
            out = b.op(
                draw(st.sampled_from(["add", "mul", "maximum"])), v, draw(st.sampled_from(pool))
            )
        elif kind == "reduce" and v.shape:
            out = b.op("mul", v, b.op("sum", v, axes=(-1,), keepdims=True))
        elif kind == "cast":
            out = b.op("cast", b.op("cast", v, to="bf16"), to="f32")
        elif kind == "reduce":
            out = b.op("neg", v)
        else:
            w = draw(st.sampled_from(pool))
            out = b.op("add", b.op("mul", v, w), b.op("mul", v, w))
        pool.append(out)
    outs = draw(st.lists(st.sampled_from(pool[2:] or pool), min_size=1, max_size=2))
    return b.build(*outs)


@settings(max_examples=80, deadline=None)
@given(const_heavy_graphs(), st.integers(0, 100))
def test_passes_preserve_results(g, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3)).astype(np.float32)
    with np.errstate(all="ignore"):
        expected = cs.interpret(cs.verify(g), x)
        for p in (dce, cse, fold_constants, simplify):
            out = cs.verify(p(g))
            assert len(out.nodes) <= len(g.nodes)
            for a, b in zip(expected, cs.interpret(out, x), strict=True):
                assert a.dtype == b.dtype
                np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True)
        s = simplify(g)
        # simplify reaches a fixed point in one go, and leaves no foldable node behind
        assert str(simplify(s)) == str(s)
        consts = {n.output for n in s.nodes if n.op == "constant"}
        assert not [n for n in s.nodes if n.inputs and all(v in consts for v in n.inputs)]
