"""The graph IR: values, nodes and graphs.

A :class:`Graph` has input values, a list of :class:`Node` in topological order, and output
values. Every node defines exactly one new value (SSA). Values are compared by identity, so
passes create new nodes without juggling names; names such as ``%3`` are given at print time
(inputs first, then nodes in order).

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4,), f32)
    >>> y = b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0))
    >>> g = b.build(y)
    >>> len(g.nodes)
    4
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from chipsim.ir.dtypes import DType, f32
from chipsim.ir.types import TensorType


@dataclass(frozen=True, slots=True, eq=False)
class Value:
    """A tensor in the graph: defined once (by a node or as a graph input), used many times."""

    type: TensorType
    hint: str = ""  # optional human name, e.g. the Python variable that held it

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    def __repr__(self) -> str:
        return f"Value({self.type}{', ' + self.hint if self.hint else ''})"


class Attrs(Mapping[str, Any]):
    """An immutable, ordered, hashable mapping of attribute names to plain values."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items: tuple[tuple[str, Any], ...] = tuple(sorted((k, _freeze(v)) for k, v in pairs))

    def __getitem__(self, key: str) -> Any:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attrs) and self._items == other._items

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}={v!r}" for k, v in self._items) + "}"


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ConstData.of(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True, slots=True)
class ConstData:
    """The payload of a ``constant`` node: raw bytes plus shape and dtype, hashable."""

    data: bytes
    shape: tuple[int, ...]
    dtype: DType

    @staticmethod
    def of(array: Any, dt: DType | None = None) -> ConstData:
        from chipsim.ir.dtypes import from_numpy, to_storage

        arr = np.asarray(array)
        dt = dt or from_numpy(arr.dtype)  # float64 -> f32, float16 stays f16 (as eager does)
        arr = np.array(to_storage(arr, dt), order="C")
        return ConstData(arr.tobytes(), tuple(arr.shape), dt)

    def array(self) -> np.ndarray:
        """A fresh, writable numpy array with the constant's values."""
        return np.frombuffer(self.data, dtype=self.dtype.numpy).reshape(self.shape).copy()

    def __repr__(self) -> str:
        arr = self.array()
        if arr.size == 1:
            return repr(arr.reshape(()).item())
        return f"<{self.dtype.name}{list(self.shape)} constant>"


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """One operation: ``output = op(*inputs, **attrs)``.

    ``loc`` is the user's source location (``file.py:12``) when the node came from tracing.
    """

    op: str
    inputs: tuple[Value, ...]
    attrs: Attrs
    output: Value
    loc: str = ""

    def replace(self, **changes: Any) -> Node:
        return replace(self, **changes)

    @property
    def type(self) -> TensorType:
        return self.output.type


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """Inputs, nodes in topological order, outputs. Immutable; passes build new graphs."""

    inputs: tuple[Value, ...]
    nodes: tuple[Node, ...]
    outputs: tuple[Value, ...]
    name: str = "graph"
    # a cache of users(): not an init field, so dataclasses.replace() starts a fresh one
    _users: dict = field(default=None, init=False, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "outputs", tuple(self.outputs))

    # -- queries ---------------------------------------------------------------------------
    def producer(self) -> dict[Value, Node]:
        """Map each node-defined value to the node that defines it."""
        return {n.output: n for n in self.nodes}

    def users(self) -> dict[Value, list[Node]]:
        """Map each value to the nodes that read it, in graph order (ordered, reproducible)."""
        if self._users is None:
            users: dict[Value, list[Node]] = {v: [] for v in self.inputs}
            for n in self.nodes:
                users.setdefault(n.output, [])
                for v in n.inputs:
                    users.setdefault(v, [])
                    if not users[v] or users[v][-1] is not n:
                        users[v].append(n)
            object.__setattr__(self, "_users", users)
        return self._users

    def names(self) -> dict[Value, str]:
        """Print names: ``%0``, ``%1``, ... for inputs then node outputs, in order."""
        names: dict[Value, str] = {}
        for v in (*self.inputs, *(n.output for n in self.nodes)):
            if v not in names:
                names[v] = f"%{len(names)}"
        return names

    def node_index(self) -> dict[Node, int]:
        return {n: i for i, n in enumerate(self.nodes)}

    def replace(self, **changes: Any) -> Graph:
        return replace(self, **changes)

    # -- views (implemented in sibling modules, exposed here for convenience) ----------------
    def __str__(self) -> str:
        from chipsim.ir.printer import format_graph

        return format_graph(self)

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"

    def table(self) -> str:
        """A table with one row per node and its FLOP and byte counts."""
        from chipsim.ir.printer import format_table

        return format_table(self)

    def _repr_html_(self) -> str:
        from chipsim.ir.printer import format_html

        return format_html(self)

    def to_json(self) -> str:
        from chipsim.ir.serialize import graph_to_json

        return graph_to_json(self)

    @staticmethod
    def from_json(text: str) -> Graph:
        from chipsim.ir.serialize import graph_from_json

        return graph_from_json(text)

    def draw(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the graph with matplotlib in layers (inputs at the top)."""
        # viz sits above ir (it reads results, duck-typed); this convenience for learners
        # imports it only when a graph is drawn, so ir itself never needs matplotlib.
        from chipsim.viz.graph import draw_graph

        return draw_graph(self, ax=ax, **kwargs)

    def __call__(self, *args: Any) -> Any:
        """Run the graph with the numpy reference interpreter."""
        from chipsim.ir.interpreter import interpret

        outs = interpret(self, *args)
        return outs[0] if len(outs) == 1 else outs


class GraphBuilder:
    """Builds a graph op by op, inferring each result type from the op registry."""

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []

    def input(self, shape: tuple[int, ...], dt: DType | str = f32, hint: str = "") -> Value:
        v = Value(TensorType(tuple(shape), dt), hint)
        self.inputs.append(v)
        return v

    def op(self, op: str, *inputs: Value, loc: str = "", hint: str = "", **attrs: Any) -> Value:
        """Append ``op(*inputs, **attrs)`` and return its result value."""
        from chipsim.ir.ops import infer_type

        frozen = Attrs(attrs)
        out_type = infer_type(op, [v.type for v in inputs], frozen)
        node = Node(op, tuple(inputs), frozen, Value(out_type, hint), loc)
        self.nodes.append(node)
        return node.output

    def const(self, value: Any, dt: DType | str | None = None) -> Value:
        """A ``constant`` node holding ``value`` (a Python number or numpy array)."""
        from chipsim.ir.dtypes import dtype as to_dtype

        data = ConstData.of(value, to_dtype(dt) if dt is not None else None)
        return self.op("constant", value=data)

    def build(self, *outputs: Value) -> Graph:
        return Graph(tuple(self.inputs), tuple(self.nodes), tuple(outputs), self.name)
