"""Python control flow on traced tensors raises a TraceError that points at the user's line."""

import inspect
import os

import numpy as np
import pytest

import chipsim as cs

X = np.ones((2, 3), np.float32)


def _offending_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    (i,) = [i for i, ln in enumerate(lines) if "# offending" in ln]
    return start + i


def f_if(t):
    if t.sum() > 0:  # offending
        return t
    return -t


def f_bool(t):
    flag = bool(t.max() > 1)  # offending
    return t if flag else -t


def f_while(t):
    while t.sum() > 0:  # offending
        t = t - 1
    return t


def f_int(t):
    n = int(t.sum())  # offending
    return t * n


def f_float(t):
    s = float(t.mean())  # offending
    return t * s


def f_index(t):
    scales = [1.0, 2.0, 3.0]
    return t * scales[t.sum()]  # offending


def f_iter(t):
    total = 0
    for row in t:  # offending
        total = total + row
    return total


def f_numpy(t):
    arr = t.numpy()  # offending
    return t + arr


def f_asarray(t):
    arr = np.asarray(t)  # offending
    return t + arr


BRANCHES = [f_if, f_bool, f_while, f_iter]
VALUES = [f_int, f_float, f_index, f_numpy, f_asarray]
CASES = BRANCHES + VALUES


@pytest.mark.parametrize("fn", CASES, ids=[c.__name__ for c in CASES])
def test_control_flow_on_a_traced_tensor(fn):
    with pytest.raises(cs.TraceError) as info:
        cs.trace(fn, X)
    msg = str(info.value)
    this_file = os.path.basename(__file__)
    assert f"{this_file}:{_offending_line(fn)}:" in msg, msg
    assert "# offending" in msg  # the source line is quoted
    if fn in BRANCHES:
        assert "chipsim.ops.where" in msg and "chipsim.cond" in msg
        assert "cannot choose a branch" in msg


@pytest.mark.parametrize("fn", VALUES, ids=[c.__name__ for c in VALUES])
def test_asking_a_traced_tensor_for_its_value_says_it_has_none_yet(fn):
    """float(x.sum()) or print(x.numpy()) chooses no branch: say what is really wrong."""
    with pytest.raises(cs.TraceError) as info:
        cs.trace(fn, X)
    msg = str(info.value)
    assert "a traced tensor has no value yet" in msg
    assert "branch" not in msg and "control flow" not in msg
    assert "return what you want to see" in msg and "eagerly" in msg


def test_the_same_code_runs_eagerly():
    t = cs.tensor(X)
    assert f_if(t).numpy().tolist() == X.tolist()
    assert int(t.sum()) == 6 and float(t.mean()) == 1.0


def test_returning_a_non_tensor_is_a_trace_error():
    with pytest.raises(cs.TraceError, match="returned int as output #0"):
        cs.trace(lambda t: 3, X)


def test_values_from_two_traces_do_not_mix():
    leaked = []

    def grab(t):
        leaked.append(t)
        return t + 1

    cs.trace(grab, X)
    with pytest.raises(cs.ChipsimError, match="two different traces"):
        cs.trace(lambda t: t + leaked[0], X)


# -- cond -------------------------------------------------------------------------------------
def _counted():
    calls = {"true": 0, "false": 0}

    def true_fn(x):
        calls["true"] += 1
        return x.exp()

    def false_fn(x):
        calls["false"] += 1
        return -x

    return calls, true_fn, false_fn


def test_cond_eager_runs_only_the_chosen_branch():
    calls, tf, ff = _counted()
    x = cs.tensor(X)
    out = cs.cond(x.sum() > 0, tf, ff, x)
    np.testing.assert_allclose(out.numpy(), np.exp(X), rtol=1e-6)
    assert calls == {"true": 1, "false": 0}
    out = cs.cond(x.sum() < 0, tf, ff, x)
    assert out.numpy().tolist() == (-X).tolist()
    assert calls == {"true": 1, "false": 1}


def test_cond_traced_records_both_branches_and_selects_with_where():
    calls, tf, ff = _counted()
    g = cs.trace(lambda x: cs.cond(x.sum() > 0, tf, ff, x), X)
    assert calls == {"true": 1, "false": 1}
    ops = [n.op for n in g.nodes]
    assert "exp" in ops and "neg" in ops and ops[-1] == "where"
    np.testing.assert_allclose(g(X), np.exp(X), rtol=1e-6)
    np.testing.assert_allclose(g(-X), X, rtol=1e-6)


def test_cond_traced_with_tuples():
    g = cs.trace(lambda x: cs.cond(x.sum() > 0, lambda a: (a, a * 2), lambda a: (-a, a), x), X)
    a, b = g(X)
    assert a.tolist() == X.tolist() and b.tolist() == (2 * X).tolist()


def test_cond_branch_type_mismatch_is_a_trace_error():
    with pytest.raises(
        cs.TraceError, match="cond branch outputs #0 differ: f32\\[2, 3\\] vs f32\\[3\\]"
    ):
        cs.trace(lambda x: cs.cond(x.sum() > 0, lambda a: a, lambda a: a.sum(0), x), X)
    with pytest.raises(cs.TraceError, match="return 2 and 1 values"):
        cs.trace(lambda x: cs.cond(x.sum() > 0, lambda a: (a, a), lambda a: (a,), x), X)
    with pytest.raises(cs.TraceError, match="single-element bool"):
        cs.trace(lambda x: cs.cond(x > 0, lambda a: a, lambda a: a, x), X)


# -- jit --------------------------------------------------------------------------------------
def test_jit_caches_per_signature_and_returns_eager_tensors():
    traces = []

    @cs.jit
    def f(x):
        traces.append(x.shape)
        return (x + 1) * 2

    a = f(cs.tensor(X))
    assert isinstance(a, cs.Tensor) and a.numpy().tolist() == (4 * X).tolist()
    f(cs.tensor(X * 3))
    assert traces == [(2, 3)]  # same signature: no new trace
    b = f(cs.tensor(np.ones(5, np.float32)))
    assert traces == [(2, 3), (5,)] and b.shape == (5,)
    f(np.ones((2, 3), np.float32))
    assert len(traces) == 2  # numpy array with the same type reuses the graph
    f(cs.tensor(np.ones((2, 3), np.float16)))
    assert len(traces) == 3  # a new dtype is a new signature
    assert len(f.graphs) == 3 and f.graph.inputs[0].dtype == cs.f16
    assert f.__name__ == "f"


def test_jit_multiple_outputs_and_unused_graph():
    @cs.jit
    def g(x, y):
        return x @ y, x.sum()

    with pytest.raises(cs.TraceError, match="has not been called yet"):
        g.graph  # noqa: B018
    m, s = g(cs.tensor(X), cs.tensor(X.T.copy()))
    assert m.shape == (2, 2) and s.numpy() == 6.0 and s.dtype == cs.f32


def test_trace_records_user_locations_and_hints():
    def model(inp, weight):
        return inp @ weight

    g = cs.trace(model, X, cs.TensorType((3, 4), cs.f32))
    assert [v.hint for v in g.inputs] == ["inp", "weight"]
    assert g.nodes[0].loc.endswith(
        f"{os.path.basename(__file__)}:{inspect.getsourcelines(model)[1] + 1}"
    )
    assert g.name == "model"
