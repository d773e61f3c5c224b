"""The verifier rejects each kind of malformed graph with its own message and a >> marker."""

import numpy as np
import pytest

import chipsim as cs
from chipsim.ir import Attrs, ConstData, TensorType
from chipsim.ir.graph import Graph, Node, Value

F4 = TensorType((4,), "f32")


def V(t=F4):
    return Value(t)


def reject(graph, *fragments, marked):
    with pytest.raises(cs.IRError) as info:
        cs.verify(graph)
    msg = str(info.value)
    for f in fragments:
        assert f in msg, msg
    marked_lines = [ln for ln in msg.splitlines() if ln.lstrip().startswith(">>")]
    assert len(marked_lines) == 1, msg
    assert marked in marked_lines[0], msg
    return msg


def test_a_good_graph_passes_and_is_returned():
    b = cs.GraphBuilder()
    x = b.input((4,))
    g = b.build(b.op("exp", x))
    assert cs.verify(g) is g


def test_unknown_op():
    x, y = V(), V()
    g = Graph((x,), (Node("frob", (x,), Attrs(), y),), (y,))
    reject(g, "unknown op 'frob'", marked="%1 = frob(%0) : f32[4]")


def test_wrong_arity():
    x, y = V(), V()
    g = Graph((x,), (Node("add", (x,), Attrs(), y),), (y,))
    reject(g, "add takes 2 input(s), got 1", marked="%1 = add(%0) : f32[4]")


def test_bad_attribute():
    x, y = V(), V()
    g = Graph((x,), (Node("softmax", (x,), Attrs({"axis": "last"}), y),), (y,))
    reject(g, "softmax: bad attribute axis='last': expected an int", marked="%1 = softmax(%0)")
    g2 = Graph((x,), (Node("exp", (x,), Attrs({"fast": True}), y),), (y,))
    reject(g2, "exp: unknown attribute 'fast'", marked="%1 = exp(%0)")


def test_constant_without_value_still_prints():
    y = V()
    g = Graph((), (Node("constant", (), Attrs(), y),), (y,))
    reject(g, "missing required attribute 'value'", marked="%0 = constant() : f32[4]")


def test_shape_mismatch():
    x, y = V(), V(TensorType((4, 1), "f32"))
    g = Graph((x,), (Node("exp", (x,), Attrs(), y),), (y,))
    reject(
        g,
        "shape mismatch: exp produces f32[4], but the node says f32[4, 1]",
        marked="%1 = exp(%0) : f32[4, 1]",
    )


def test_dtype_mismatch():
    x, y = V(), V(TensorType((4,), "f16"))
    g = Graph((x,), (Node("exp", (x,), Attrs(), y),), (y,))
    reject(
        g,
        "dtype mismatch: exp produces f32[4], but the node says f16[4]",
        marked="%1 = exp(%0) : f16[4]",
    )


def test_operand_dtype_mismatch():
    x, h, y = V(), V(TensorType((4,), "f16")), V()
    g = Graph((x, h), (Node("add", (x, h), Attrs(), y),), (y,))
    reject(g, "insert a cast", "f16[4]", marked="%2 = add(%0, %1)")


def test_use_before_definition():
    x, a, b = V(), V(), V()
    g = Graph((x,), (Node("exp", (a,), Attrs(), b), Node("neg", (x,), Attrs(), a)), (b,))
    reject(
        g, "%2 is used before it is defined", "topological order", marked="%1 = exp(%2) : f32[4]"
    )


def test_value_from_another_graph():
    x, stranger, y = V(), V(), V()
    g = Graph((x,), (Node("add", (x, stranger), Attrs(), y),), (y,))
    reject(g, "input #1 of this add is not defined anywhere", marked="%1 = add(%0, %?)")


def test_cycle():
    x, a, b = V(), V(), V()
    nodes = (Node("add", (x, b), Attrs(), a), Node("exp", (a,), Attrs(), b))
    g = Graph((x,), nodes, (b,))
    reject(g, "the graph has a cycle through %1, %2", "must be acyclic", marked="%1 = add(%0, %2)")


def test_dangling_output():
    x, y, ghost = V(), V(), V()
    g = Graph((x,), (Node("exp", (x,), Attrs(), y),), (y, ghost))
    reject(g, "output #1 (f32[4]) is dangling", marked="return %1, %?")


def test_no_outputs():
    x = V()
    reject(Graph((x,), (), ()), "the graph returns nothing", marked="return")


def test_duplicate_definition():
    x, y = V(), V()
    nodes = (Node("exp", (x,), Attrs(), y), Node("neg", (x,), Attrs(), y))
    g = Graph((x,), nodes, (y,))
    reject(g, "%1 is defined twice", "give this node a new Value", marked="= neg(%0)")


def test_node_redefining_an_input():
    x = V()
    data = ConstData.of(np.zeros(4, np.float32))
    g = Graph((x,), (Node("constant", (), Attrs({"value": data}), x),), (x,))
    reject(g, "%0 is defined twice", marked="%0 = constant(")


def test_duplicate_input():
    x, y = V(), V()
    g = Graph((x, x), (Node("exp", (x,), Attrs(), y),), (y,))
    reject(g, "graph input %0 is listed twice", marked="graph(%0: f32[4], %0: f32[4])")


def test_message_shows_context_lines():
    b = cs.GraphBuilder()
    x = b.input((4,))
    y = b.op("exp", b.op("exp", b.op("exp", x)))
    good = b.build(y)
    bad_type = Value(TensorType((5,), "f32"))
    nodes = list(good.nodes) + [Node("neg", (y,), Attrs(), bad_type)]
    g = Graph(good.inputs, tuple(nodes), (bad_type,))
    msg = reject(g, "shape mismatch", marked="%4 = neg(%3) : f32[5]")
    assert "%3 = exp(%2) : f32[4]" in msg and "return %4" in msg
    assert "%1 = exp(%0)" not in msg  # only a few lines of context


def test_constant_with_wrong_type():
    y = Value(TensorType((2,), "f32"))
    data = ConstData.of(np.array([1.0, 2.0], np.float16))
    g = Graph((), (Node("constant", (), Attrs({"value": data}), y),), (y,))
    reject(g, "dtype mismatch: constant produces f16[2]", marked="%0 = constant(")
