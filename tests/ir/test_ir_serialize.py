"""JSON form: lossless round trip, versioning, and robustness against mutated documents."""

import base64
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_graph_strategies import example_inputs, graphs, run

import chipsim as cs
from chipsim.ir.serialize import graph_from_json, graph_to_json


def _bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=60, deadline=None)
@given(graphs())
def test_round_trip_is_lossless(g):
    back = graph_from_json(graph_to_json(g))
    assert str(back) == str(g)
    assert back.name == g.name
    assert [v.hint for v in back.inputs] == [v.hint for v in g.inputs]
    assert graph_to_json(back) == graph_to_json(g)
    for a, b in zip(g.nodes, back.nodes, strict=True):
        if a.op == "constant":
            assert a.attrs["value"] == b.attrs["value"]  # same bytes, shape, dtype
    xs = example_inputs(g)
    for a, b in zip(run(g, xs), run(back, xs), strict=True):
        assert _bitwise_equal(a, b)


def test_constants_are_bit_exact_in_every_float_dtype():
    b = cs.GraphBuilder()
    vals = np.array([0.1, -1e-8, 3.14159, 65504.0, np.inf, np.nan], np.float32)
    outs = [b.const(vals, dt) for dt in ("f32", "f16", "bf16")]
    outs.append(b.const(np.array([[1, -2, 2**31 - 1]], np.int32)))
    outs.append(b.const(np.array([True, False])))
    g = b.build(*outs)
    back = graph_from_json(graph_to_json(g))
    assert str(back) == str(g)
    for a, c in zip(g(), back(), strict=True):
        assert _bitwise_equal(a, c)
    assert back.outputs[2].dtype == cs.bf16


def test_attributes_and_locations_survive():
    b = cs.GraphBuilder("convnet")
    x = b.input((1, 5, 5, 2), hint="image")
    w = b.const(np.ones((3, 3, 2, 4), np.float32))
    y = b.op("conv2d", x, w, stride=(2, 1), padding="same", loc="model.py:12")
    z = b.op("sum", y, axes=(1, 2), keepdims=True, loc="model.py:13")
    g = b.build(b.op("layernorm", z, eps=1e-3))
    back = graph_from_json(graph_to_json(g))
    assert [n.loc for n in back.nodes] == [n.loc for n in g.nodes]
    assert [n.attrs for n in back.nodes] == [n.attrs for n in g.nodes]
    assert back.inputs[0].hint == "image"
    x0 = np.random.default_rng(1).standard_normal((1, 5, 5, 2)).astype(np.float32)
    np.testing.assert_array_equal(g(x0), back(x0))


def test_unknown_version_is_rejected_with_the_version():
    doc = json.loads(graph_to_json(cs.trace(lambda x: x + 1, np.zeros(2, np.float32))))
    doc["version"] = 7
    with pytest.raises(cs.SerializationError, match="unsupported graph JSON version 7"):
        graph_from_json(json.dumps(doc))


def test_named_errors():
    with pytest.raises(cs.SerializationError, match="not valid JSON"):
        graph_from_json("{")
    with pytest.raises(cs.SerializationError, match='"format" must be "chipsim.graph"'):
        graph_from_json("{}")
    with pytest.raises(cs.SerializationError, match="not valid JSON"):
        graph_from_json("[" * 100_000)


def test_document_that_breaks_the_graph_is_rejected_by_verify():
    doc = json.loads(graph_to_json(cs.trace(lambda x: x.exp(), np.zeros(2, np.float32))))
    doc["values"][1]["shape"] = [3]
    with pytest.raises(cs.IRError, match="shape mismatch"):
        graph_from_json(json.dumps(doc))


# -- mutation fuzzing -------------------------------------------------------------------------
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _set(doc, path, value=None, delete=False):
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value


def _get(doc, path):
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def mutated_documents(draw):
    g = draw(graphs(max_ops=4))
    text = graph_to_json(g)
    doc = json.loads(text)
    kind = draw(st.sampled_from(["delete", "replace", "number", "truncate", "base64", "type"]))
    paths = [p for p in _paths(doc) if p]
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text) - 1))]
    if kind == "base64":
        datas = [p for p in paths if p[-1] == "data" and isinstance(_get(doc, p), str)]
        if datas:
            p = draw(st.sampled_from(datas))
            s = _get(doc, p)
            cut = draw(st.integers(0, len(s)))
            junk = draw(st.sampled_from(["", "!", "A", "====", "é", "AAAA"]))
            _set(doc, p, s[:cut] + junk + s[cut + 1 :])
            return json.dumps(doc)
        kind = "replace"
    path = draw(st.sampled_from(paths))
    if kind == "delete":
        _set(doc, path, delete=True)
    elif kind == "replace":
        _set(doc, path, draw(json_values))
    elif kind == "type":
        old = _get(doc, path)
        _set(doc, path, [old] if not isinstance(old, list) else {"x": old})
    else:
        numbers = [p for p in paths if isinstance(_get(doc, p), int)]
        p = draw(st.sampled_from(numbers)) if numbers else path
        old = _get(doc, p)
        delta = draw(st.sampled_from([-1, 1, -(10**9), 10**12, 2**63]))
        _set(doc, p, (old + delta) if isinstance(old, int) else delta)
    return json.dumps(doc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_documents_only_raise_chipsim_errors(text):
    try:
        g = graph_from_json(text)
    except cs.ChipsimError:
        return
    assert cs.verify(g) is g


def test_corrupt_base64_is_a_serialization_error():
    b = cs.GraphBuilder()
    g = b.build(b.const(np.arange(4, dtype=np.float32)))
    doc = json.loads(graph_to_json(g))
    doc["nodes"][0]["attrs"]["value"]["const"]["data"] = "not base64!"
    with pytest.raises(cs.SerializationError, match="malformed graph JSON"):
        graph_from_json(json.dumps(doc))
    short = base64.b64encode(b"\0" * 12).decode()
    doc["nodes"][0]["attrs"]["value"]["const"]["data"] = short
    with pytest.raises(cs.SerializationError, match="const data has 12 bytes, expected 16"):
        graph_from_json(json.dumps(doc))
