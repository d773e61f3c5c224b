"""Readable names for kernels and nodes, used by partitions, errors and reports.

A kernel is named after its ops in order, TVM style: ``fused_matmul_add_relu``; a kernel of
one op is just that op's name (``matmul``). Constants are data, not work, so they never appear
in a name.
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.ir.graph import Graph, Node


def kernel_name(graph: Graph, group: Sequence[int]) -> str:
    """``fused_`` + the op names of ``group`` (node indices) in order; one op: its name.

    Example:
        >>> from chipsim.ir import GraphBuilder, f32
        >>> b = GraphBuilder()
        >>> x = b.input((4,), f32)
        >>> g = b.build(b.op("relu", b.op("add", x, x)))
        >>> kernel_name(g, (0, 1))
        'fused_add_relu'
    """
    return name_of_nodes([graph.nodes[i] for i in group])


def name_of_nodes(nodes: Sequence[Node]) -> str:
    """The kernel name of these nodes' ops, in order (constants left out; only constants: the
    constants' op name). The one naming rule: :func:`kernel_name` and the code generator use
    it."""
    work = [n.op for n in nodes if not n.is_constant] or [n.op for n in nodes[:1]]
    return work[0] if len(work) == 1 else "fused_" + "_".join(work)


def unique_kernel_names(graph: Graph, groups: Sequence[Sequence[int]]) -> list[str]:
    """Kernel names for ``groups``, with ``_1``, ``_2``... appended to repeats (in order)."""
    seen: dict[str, int] = {}
    names = []
    for group in groups:
        base = kernel_name(graph, group)
        count = seen.get(base, 0)
        seen[base] = count + 1
        names.append(base if count == 0 else f"{base}_{count}")
    return names


def describe_node(graph: Graph, index: int, names: dict | None = None) -> str:
    """``%5 = relu`` for node ``index`` (its SSA value name and op), for messages."""
    names = graph.names() if names is None else names
    node = graph.nodes[index]
    return f"{names[node.output]} = {node.op}"
