"""Graph queries (users, producer, names) and the reference interpreter's errors."""

import numpy as np
import pytest

import chipsim as cs


def _graph():
    b = cs.GraphBuilder("g")
    x = b.input((3,), hint="x")
    y = b.op("exp", x)
    z = b.op("add", y, y)
    w = b.op("mul", x, z)
    return b.build(w, y), (x, y, z, w)


def test_users_producer_and_names_are_ordered():
    g, (x, y, z, w) = _graph()
    users = g.users()
    assert [n.op for n in users[x]] == ["exp", "mul"]
    assert [n.op for n in users[y]] == ["add"]  # add(y, y) counts once
    assert users[w] == []
    assert g.producer()[z].op == "add" and x not in g.producer()
    assert list(g.names().values()) == ["%0", "%1", "%2", "%3"]
    assert g.users() is users  # cached


def test_interpreter_runs_and_names_the_failing_node():
    g, _ = _graph()
    x = np.array([0.0, 1.0, 2.0], np.float32)
    w, y = g(x)
    np.testing.assert_allclose(w, x * 2 * np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    with pytest.raises(cs.ExecutionError, match="g takes 1 inputs, got 2"):
        g(x, x)
    with pytest.raises(
        cs.ExecutionError, match=r"input %0 expects shape \[3\] \(f32\[3\]\), got \[4\]"
    ):
        g(np.zeros(4, np.float32))


def test_graph_is_immutable_and_replace_resets_users():
    g, (x, y, _, _) = _graph()
    with pytest.raises(AttributeError):
        g.name = "other"  # type: ignore[misc]
    g.users()
    g2 = g.replace(outputs=(y,))
    assert g2.outputs == (y,) and g2.users()[x] == g.users()[x]
    node = g.nodes[0]
    assert node.replace(loc="a.py:1").loc == "a.py:1" and node.loc == ""
