"""``verify(graph)``: check that a graph is well formed, or raise an :class:`IRError`.

The message names what is wrong and shows the offending line of the graph's SSA text with a
few lines of context, marked ``>>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import networkx as nx

from chipsim.errors import IRError
from chipsim.ir.ops import check_arity, check_attrs, get_op, infer_type
from chipsim.ir.printer import excerpt

if TYPE_CHECKING:  # types only: verify sits below the graph, beside the printer
    from chipsim.ir.graph import Graph, Node, Value


def _fail(graph: Graph, line: int, what: str) -> IRError:
    return IRError(f"{what}\n{excerpt(graph, line)}")


def _check_cycle(graph: Graph) -> None:
    producer = graph.producer()
    index = graph.node_index()
    if all(
        index[producer[v]] < i
        for i, node in enumerate(graph.nodes)
        for v in node.inputs
        if v in producer
    ):
        return  # every value is made before it is read: nodes in topological order, no cycle
    # otherwise find the cycle to name it (networkx's search is slow on big graphs: only here)
    dg = nx.DiGraph()
    dg.add_nodes_from(range(len(graph.nodes)))
    for i, node in enumerate(graph.nodes):
        for v in node.inputs:
            if v in producer:
                dg.add_edge(index[producer[v]], i)
    try:
        cycle = nx.find_cycle(dg)
    except nx.NetworkXNoCycle:
        return
    names = graph.names()
    members = ", ".join(names[graph.nodes[a].output] for a, _ in cycle)
    raise _fail(
        graph,
        cycle[0][0] + 1,
        f"the graph has a cycle through {members}: a value cannot depend on itself; "
        "a static graph must be acyclic (unroll loops or use where/cond)",
    )


def _check_node(graph: Graph, i: int, node: Node) -> None:
    line = i + 1
    try:
        opdef = get_op(node.op)
        check_arity(opdef, len(node.inputs))
        check_attrs(opdef, node.attrs)
        expected = infer_type(node.op, [v.type for v in node.inputs], node.attrs)
    except IRError as exc:
        raise _fail(graph, line, str(exc)) from None
    except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError) as exc:
        raise _fail(graph, line, f"{node.op}: invalid operands or attributes ({exc})") from None
    if expected != node.type:
        kind = "shape" if expected.shape != node.type.shape else "dtype"
        raise _fail(
            graph,
            line,
            f"{kind} mismatch: {node.op} produces {expected}, but the node "
            f"says {node.type}: rebuild the node so its type is inferred",
        )


def verify(graph: Graph) -> Graph:
    """Raise :class:`IRError` if ``graph`` is malformed; return it unchanged otherwise.

    Checks: every op exists with the right arity and attributes; every result type equals
    the inferred one (shapes and dtypes agree); values are defined once, before use; no
    cycles; every output is defined.
    """
    names = graph.names()
    defined: set[Value] = set()
    for v in graph.inputs:
        if v in defined:
            raise _fail(graph, 0, f"graph input {names[v]} is listed twice")
        defined.add(v)
    all_defs = {n.output for n in graph.nodes} | set(graph.inputs)
    _check_cycle(graph)
    for i, node in enumerate(graph.nodes):
        for v in node.inputs:
            if v not in defined:
                if v in all_defs:
                    raise _fail(
                        graph,
                        i + 1,
                        f"{names[v]} is used before it is defined: "
                        "nodes must be in topological order",
                    )
                raise _fail(
                    graph,
                    i + 1,
                    f"input #{node.inputs.index(v)} of this {node.op} is "
                    "not defined anywhere in the graph (a value from "
                    "another graph?)",
                )
        if node.output in defined:
            raise _fail(
                graph,
                i + 1,
                f"{names[node.output]} is defined twice (SSA: every value "
                "has exactly one definition); give this node a new Value",
            )
        _check_node(graph, i, node)
        defined.add(node.output)
    last = len(graph.nodes) + 1
    if not graph.outputs:
        raise _fail(graph, last, "the graph returns nothing; give it at least one output")
    for k, v in enumerate(graph.outputs):
        if v not in defined:
            raise _fail(
                graph,
                last,
                f"output #{k} ({v.type}) is dangling: no input or node of this graph defines it",
            )
    return graph
