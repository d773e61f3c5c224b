"""What a kernel reads and writes: the one rule for a group's boundary.

A group of nodes run as one kernel **reads** every value one of its nodes takes that no node
of the group makes (graph inputs, weights, other kernels' results), and **writes** every
value it makes that is needed after it: a graph output, or a value a node outside the group
reads. The rest of what it makes stays **inside** (in its tiles, never in memory). The
fusion cost model, the code generator's kernels and the compiler's memory plan all ask this
module, so they agree on which tensors cross a kernel's edge.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4,), f32)
    >>> y = b.op("relu", b.op("add", x, x))
    >>> g = b.build(b.op("neg", y))
    >>> edge = kernel_boundary(g, [0, 1])
    >>> [g.names()[v] for v in (*edge.reads, *edge.writes, *edge.inner)]
    ['%0', '%2', '%1']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chipsim.ir.graph import Graph, Node, Value


@dataclass(frozen=True)
class Boundary:
    """The values a kernel reads, writes and keeps inside (see the module docstring)."""

    reads: tuple[Value, ...]  # in the order the kernel's nodes first read them
    writes: tuple[Value, ...]  # in graph order
    inner: tuple[Value, ...]  # in graph order


def reads_of(nodes: Iterable[Node]) -> tuple[Value, ...]:
    """The values ``nodes`` read that none of them makes, in order of first use."""
    nodes = tuple(nodes)
    made = {n.output for n in nodes}
    reads: dict[Value, None] = {}
    for n in nodes:
        for v in n.inputs:
            if v not in made:
                reads.setdefault(v, None)
    return tuple(reads)


def kernel_boundary(graph: Graph, group: Sequence[int]) -> Boundary:
    """What the kernel of ``group`` (node indices of ``graph``) reads, writes and keeps."""
    group = sorted(group)
    nodes = [graph.nodes[i] for i in group]
    users, outputs = graph.users(), set(graph.outputs)
    inside = set(nodes)
    writes, inner = [], []
    for n in nodes:
        leaves = n.output in outputs or any(u not in inside for u in users.get(n.output, ()))
        (writes if leaves else inner).append(n.output)
    return Boundary(reads_of(nodes), tuple(writes), tuple(inner))
