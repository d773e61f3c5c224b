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

from dataclasses import dataclass, field, replace
from typing import Any

from chipsim import drawing
from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.dtypes import DType, f32
from chipsim.ir.dtypes import dtype as to_dtype
from chipsim.ir.interpreter import interpret
from chipsim.ir.ops import OPS, infer_type
from chipsim.ir.printer import format_graph, format_html, format_table
from chipsim.ir.types import TensorType

__all__ = ["Attrs", "ConstData", "Graph", "GraphBuilder", "Node", "Value"]


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

    @property
    def is_constant(self) -> bool:
        """Whether the node holds data known when the graph is built (its op's trait)."""
        opdef = OPS.get(self.op)
        return opdef is not None and opdef.is_constant

    @staticmethod
    def constant(data: ConstData, hint: str = "", loc: str = "") -> Node:
        """A ``constant`` node holding ``data`` (a new value of its shape and dtype)."""
        value = Value(TensorType(data.shape, data.dtype), hint)
        return Node("constant", (), Attrs({"value": data}), value, loc)


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

    # -- views (made by the modules below: the printer, the interpreter; drawn by viz) --------
    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.inputs)} inputs, {len(self.nodes)} nodes>"

    def table(self) -> str:
        """A table with one row per node and its FLOP and byte counts."""
        return format_table(self)

    def _repr_html_(self) -> str:
        return format_html(self)

    def draw(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the graph with matplotlib in layers (inputs at the top)."""
        return drawing.draw("graph", self, ax=ax, **kwargs)

    def __call__(self, *args: Any) -> Any:
        """Run the graph with the numpy reference interpreter."""
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
        frozen = Attrs(attrs)
        out_type = infer_type(op, [v.type for v in inputs], frozen)
        node = Node(op, tuple(inputs), frozen, Value(out_type, hint), loc)
        self.nodes.append(node)
        return node.output

    def const(self, value: Any, dt: DType | str | None = None, hint: str = "") -> Value:
        """A ``constant`` node holding ``value`` (a Python number or numpy array)."""
        data = ConstData.of(value, to_dtype(dt) if dt is not None else None)
        node = Node.constant(data, hint)
        self.nodes.append(node)
        return node.output

    def build(self, *outputs: Value) -> Graph:
        return Graph(tuple(self.inputs), tuple(self.nodes), tuple(outputs), self.name)
