"""Simplification passes: dead-code elimination, common-subexpression elimination and
constant folding. Each returns a new graph with the same outputs for every input."""

from __future__ import annotations

from chipsim.ir.attrs import Attrs, ConstData
from chipsim.ir.graph import Graph, Node, Value
from chipsim.ir.ops import execute
from chipsim.ir.types import TensorType
from chipsim.passes.pipeline import Pipeline

# Folding a constant bigger than this would bloat the graph (think of `broadcast_to` a weight).
FOLD_LIMIT_ELEMENTS = 1 << 16


def _rewire(graph: Graph, nodes: list[Node], mapping: dict[Value, Value]) -> Graph:
    outputs = tuple(mapping.get(v, v) for v in graph.outputs)
    return graph.replace(nodes=tuple(nodes), outputs=outputs)


def _remap(node: Node, mapping: dict[Value, Value]) -> Node:
    if any(v in mapping for v in node.inputs):
        return node.replace(inputs=tuple(mapping.get(v, v) for v in node.inputs))
    return node


def dce(graph: Graph) -> Graph:
    """Dead-code elimination: drop nodes whose results no output depends on."""
    live: set[Value] = set(graph.outputs)
    kept: list[Node] = []
    for node in reversed(graph.nodes):
        if node.output in live:
            kept.append(node)
            live.update(node.inputs)
    return graph.replace(nodes=tuple(reversed(kept)))


def cse(graph: Graph) -> Graph:
    """Common-subexpression elimination: compute each (op, inputs, attrs) only once."""
    seen: dict[tuple, Value] = {}
    constants: dict[TensorType, list[tuple[Attrs, Value]]] = {}
    mapping: dict[Value, Value] = {}
    nodes: list[Node] = []
    for node in graph.nodes:
        node = _remap(node, mapping)
        if node.is_constant:
            # Hashing a model's weights (hundreds of MiB) would cost more than compiling it:
            # compare a constant's bytes only with the constants of its type.
            bucket = constants.setdefault(node.type, [])
            same = next((v for attrs, v in bucket if attrs == node.attrs), None)
            if same is not None:
                mapping[node.output] = same
                continue
            bucket.append((node.attrs, node.output))
            nodes.append(node)
            continue
        key = (node.op, tuple(id(v) for v in node.inputs), node.attrs, node.type)
        if key in seen:
            mapping[node.output] = seen[key]
            continue
        seen[key] = node.output
        nodes.append(node)
    return _rewire(graph, nodes, mapping)


def fold_constants(graph: Graph) -> Graph:
    """Evaluate nodes whose inputs are all constants at compile time (small results only)."""
    consts: dict[Value, ConstData] = {}
    mapping: dict[Value, Value] = {}
    nodes: list[Node] = []
    for node in graph.nodes:
        node = _remap(node, mapping)
        if node.is_constant:
            consts[node.output] = node.attrs["value"]
        elif (
            node.inputs
            and all(v in consts for v in node.inputs)
            and node.type.numel <= FOLD_LIMIT_ELEMENTS
        ):
            arrays = [consts[v].array() for v in node.inputs]
            data = ConstData.of(execute(node.op, arrays, node.attrs, node.type), node.type.dtype)
            folded = Node.constant(data, node.output.hint, node.loc)
            mapping[node.output] = folded.output
            consts[folded.output] = data
            node = folded
        nodes.append(node)
    return dce(_rewire(graph, nodes, mapping))


def simplify(graph: Graph) -> Graph:
    """Fold constants, merge common subexpressions and drop dead code."""
    return Pipeline([fold_constants, cse, dce])(graph)
