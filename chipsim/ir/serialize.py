"""Lossless, versioned JSON form of a graph.

Format (version 1)::

    {"format": "chipsim.graph", "version": 1, "name": "graph",
     "values": [{"shape": [4], "dtype": "f32", "hint": "x"}, ...],
     "inputs": [0], "outputs": [3],
     "nodes": [{"op": "add", "inputs": [0, 1], "output": 2, "attrs": {...}, "loc": ""}, ...]}

Attribute values are JSON numbers, strings, booleans, null, lists (read back as tuples) or
``{"const": {"dtype": ..., "shape": [...], "data": base64}}`` for constant data. Reading
checks everything and verifies the graph, so a bad document raises
:class:`~chipsim.errors.SerializationError` (or :class:`~chipsim.errors.IRError`), never
a half-built graph.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from chipsim.errors import ChipsimError, SerializationError
from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.dtypes import dtype
from chipsim.ir.graph import Graph, Node, Value
from chipsim.ir.types import TensorType
from chipsim.ir.verify import verify

FORMAT = "chipsim.graph"
VERSION = 1


def _encode_attr(value: Any) -> Any:
    if isinstance(value, ConstData):
        data = base64.b64encode(value.data).decode("ascii")
        return {"const": {"dtype": value.dtype.name, "shape": list(value.shape), "data": data}}
    if isinstance(value, tuple):
        return [_encode_attr(v) for v in value]
    return value


def graph_to_json(graph: Graph, indent: int | None = None) -> str:
    """Serialise ``graph`` to a JSON string (see the module docstring for the format)."""
    values = list(graph.inputs) + [n.output for n in graph.nodes]
    index = {v: i for i, v in enumerate(values)}
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "values": [{"shape": list(v.shape), "dtype": v.dtype.name, "hint": v.hint} for v in values],
        "inputs": [index[v] for v in graph.inputs],
        "outputs": [index.get(v, -1) for v in graph.outputs],
        "nodes": [
            {
                "op": n.op,
                "inputs": [index.get(v, -1) for v in n.inputs],
                "output": index[n.output],
                "attrs": {k: _encode_attr(v) for k, v in n.attrs.items()},
                "loc": n.loc,
            }
            for n in graph.nodes
        ],
    }
    return json.dumps(doc, indent=indent)


def _expect(cond: bool, what: str) -> None:
    if not cond:
        raise SerializationError(f"malformed graph JSON: {what}")


def _int(x: Any, what: str) -> int:
    _expect(isinstance(x, int) and not isinstance(x, bool), f"{what} must be an integer")
    return x


def _list(x: Any, what: str) -> list:
    _expect(isinstance(x, list), f"{what} must be a list")
    return x


def _decode_attr(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return tuple(_decode_attr(v, where) for v in value)
    if isinstance(value, dict) and set(value) == {"const"} and isinstance(value["const"], dict):
        c = value["const"]
        _expect(set(c) == {"dtype", "shape", "data"}, f"{where}: const needs dtype, shape, data")
        dt = dtype(c["dtype"])
        shape = TensorType(tuple(_list(c["shape"], f"{where} shape")), dt).shape
        _expect(isinstance(c["data"], str), f"{where}: const data must be a base64 string")
        raw = base64.b64decode(c["data"].encode("ascii"), validate=True)
        size = TensorType(shape, dt).numel * dt.numpy.itemsize
        _expect(len(raw) == size, f"{where}: const data has {len(raw)} bytes, expected {size}")
        return ConstData(raw, shape, dt)
    raise SerializationError(
        f"malformed graph JSON: {where}: unsupported attribute value {value!r}"
    )


def _decode(doc: Any) -> Graph:
    _expect(isinstance(doc, dict), "the document must be a JSON object")
    _expect(doc.get("format") == FORMAT, f'"format" must be "{FORMAT}"')
    version = doc.get("version")
    if version != VERSION:
        raise SerializationError(
            f"unsupported graph JSON version {version!r}; this chipsim reads version {VERSION}. "
            "Re-export the graph with this chipsim version."
        )
    name = doc.get("name", "graph")
    _expect(isinstance(name, str), '"name" must be a string')
    values = []
    for i, entry in enumerate(_list(doc.get("values"), '"values"')):
        _expect(isinstance(entry, dict), f"values[{i}] must be an object")
        shape = tuple(_list(entry.get("shape"), f"values[{i}].shape"))
        hint = entry.get("hint", "")
        _expect(isinstance(hint, str), f"values[{i}].hint must be a string")
        values.append(Value(TensorType(shape, dtype(entry.get("dtype"))), hint))

    def value(ref: Any, what: str) -> Value:
        idx = _int(ref, what)
        _expect(0 <= idx < len(values), f"{what} refers to value {idx}, which does not exist")
        return values[idx]

    inputs = [value(r, f"inputs[{i}]") for i, r in enumerate(_list(doc.get("inputs"), '"inputs"'))]
    nodes = []
    for i, entry in enumerate(_list(doc.get("nodes"), '"nodes"')):
        _expect(isinstance(entry, dict), f"nodes[{i}] must be an object")
        op = entry.get("op")
        _expect(isinstance(op, str), f"nodes[{i}].op must be a string")
        ins = tuple(
            value(r, f"nodes[{i}].inputs") for r in _list(entry.get("inputs"), f"nodes[{i}].inputs")
        )
        attrs = entry.get("attrs", {})
        _expect(isinstance(attrs, dict), f"nodes[{i}].attrs must be an object")
        frozen = Attrs({k: _decode_attr(v, f"nodes[{i}].attrs.{k}") for k, v in attrs.items()})
        loc = entry.get("loc", "")
        _expect(isinstance(loc, str), f"nodes[{i}].loc must be a string")
        nodes.append(Node(op, ins, frozen, value(entry.get("output"), f"nodes[{i}].output"), loc))
    outputs = [
        value(r, f"outputs[{i}]") for i, r in enumerate(_list(doc.get("outputs"), '"outputs"'))
    ]
    return Graph(tuple(inputs), tuple(nodes), tuple(outputs), name)


def graph_from_json(text: str | bytes) -> Graph:
    """Read a graph from JSON and verify it. Raises a :class:`ChipsimError` on any problem."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError, RecursionError) as exc:
        raise SerializationError(f"not valid JSON: {exc}") from None
    try:
        graph = _decode(doc)
    except ChipsimError:
        raise
    except (
        KeyError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
        RecursionError,
        OverflowError,
        binascii.Error,
    ) as exc:
        raise SerializationError(f"malformed graph JSON: {type(exc).__name__}: {exc}") from None
    return verify(graph)
