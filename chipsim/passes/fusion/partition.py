"""A :class:`Partition`: which nodes of a graph run together as one kernel.

A partition divides the graph's *ops* into groups. Each group is a tuple of node indices
(indices into ``graph.nodes``) in increasing, hence topological, order; the groups themselves
are listed in an order in which they can run (every group after the groups it reads from).

Constants are data, not kernels. A ``constant`` node (a weight or a literal such as ``1.0``)
is already in memory before the program runs, and every kernel that reads it simply loads it.
So **constants belong to no group**: a partition lists the non-constant nodes only, and
:func:`validate_partition` rejects a constant placed in a group.

A partition is plain data: it serialises to JSON (that is what an exercise hands to the
grader) and is checked by :func:`validate_partition` against the graph.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4,), f32)
    >>> g = b.build(b.op("relu", b.op("add", x, x)))
    >>> p = Partition([[0, 1]], graph=g)
    >>> print(p)
    fused_add_relu: %1 %2
    >>> Partition.from_json(p.to_json()) == p
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from chipsim.errors import PartitionError, SerializationError
from chipsim.i18n import listing, tr
from chipsim.ir.graph import Graph, Value
from chipsim.passes.fusion.boundary import kernel_boundary
from chipsim.passes.fusion.naming import describe_node, kernel_name, unique_kernel_names

JSON_FORMAT = "chipsim.partition"


def _as_index(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PartitionError(
            tr("{where}: {value!r} is not a node index; a group lists node indices (ints)",
               where=where, value=value)
        )  # fmt: skip
    return value


@dataclass(frozen=True, slots=True)
class Partition:
    """Groups of node indices, one group per kernel, groups in an order they can run.

    Args:
        groups: one sequence of node indices per kernel. Indices inside a group are sorted
            (graph order is topological order); the order of the groups is kept as given.
        graph: optional graph the indices refer to; only used for printing (kernel names and
            ``%`` value names). It is not part of equality or of the JSON form.
    """

    groups: tuple[tuple[int, ...], ...]
    graph: Graph | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.groups, (str, bytes)) or not isinstance(self.groups, Sequence):
            raise PartitionError(
                tr("groups must be a list of lists of node indices, got {groups!r}",
                   groups=self.groups)
            )  # fmt: skip
        groups = []
        for g, group in enumerate(self.groups):
            if isinstance(group, (str, bytes)) or not isinstance(group, Sequence):
                raise PartitionError(tr("group {g} must be a list of node indices, got {group!r}",
                                        g=g, group=group))  # fmt: skip
            where = tr("group {g}", g=g)
            groups.append(tuple(sorted(_as_index(i, where) for i in group)))
        object.__setattr__(self, "groups", tuple(groups))

    # -- views -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.groups)

    def with_graph(self, graph: Graph) -> Partition:
        """The same partition, printing with ``graph``'s kernel and value names."""
        return Partition(self.groups, graph=graph)

    def kernel_names(self, graph: Graph | None = None) -> list[str]:
        """One name per group: ``fused_matmul_add_relu``; repeats get ``_1``, ``_2``..."""
        graph = graph if graph is not None else self._need_graph("kernel_names")
        return unique_kernel_names(graph, self.groups)

    def group_of(self) -> dict[int, int]:
        """Map each node index to the position of its group."""
        return {i: g for g, group in enumerate(self.groups) for i in group}

    def format(self, graph: Graph | None = None) -> str:
        """One line per kernel: its name and the values its nodes define, ``%3 %4 %5``."""
        graph = graph if graph is not None else self.graph
        if graph is None:
            return "\n".join(
                tr("group {g}: nodes {nodes}", g=g, nodes=" ".join(str(i) for i in group))
                for g, group in enumerate(self.groups)
            )
        names = graph.names()
        lines = []
        for name, group in zip(self.kernel_names(graph), self.groups, strict=True):
            members = " ".join(names[graph.nodes[i].output] for i in group)
            lines.append(f"{name}: {members}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def _repr_html_(self) -> str:
        import html

        return "<pre>" + html.escape(self.format()) + "</pre>"

    def _need_graph(self, what: str) -> Graph:
        if self.graph is None:
            raise PartitionError(tr("{what} needs the graph: pass it, or use "
                                    "partition.with_graph(g)", what=what))  # fmt: skip
        return self.graph

    # -- JSON --------------------------------------------------------------------------------
    def to_json(self) -> str:
        """``{"format": "chipsim.partition", "version": 1, "groups": [[0, 1], [2]]}``."""
        return json.dumps({"format": JSON_FORMAT, "version": 1, "groups": self.groups})

    @staticmethod
    def from_json(text: str, graph: Graph | None = None) -> Partition:
        """Read :meth:`to_json`'s form back; raises :class:`SerializationError` if malformed."""
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise SerializationError(f"a partition must be JSON text: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
            raise SerializationError(
                f'not a partition: expected a JSON object with "format": "{JSON_FORMAT}"'
            )
        if data.get("version") != 1:
            raise SerializationError(f"unsupported partition version {data.get('version')!r}")
        if not isinstance(data.get("groups"), list):
            raise SerializationError('a partition needs "groups": a list of lists of ints')
        try:
            return Partition(data["groups"], graph=graph)
        except PartitionError as exc:
            raise SerializationError(f"bad partition JSON: {exc}") from None


# -- validation --------------------------------------------------------------------------------
def validate_partition(graph: Graph, partition: Partition) -> None:
    """Check that ``partition`` is a valid division of ``graph``'s ops, or raise.

    Checks, in this order: every index is in range and names a non-constant node; no node is
    in two groups; no group is empty; every op is in some group; every group is *convex* (no
    path leaves the group and comes back in, which would make the kernel wait for itself);
    the groups do not depend on each other in a cycle; and the groups are listed in an order
    where each comes after the groups it reads from.

    Raises:
        PartitionError: naming the nodes (``%3 = add``) and groups at fault.
    """
    names = graph.names()
    n = len(graph.nodes)

    def node(i: int) -> str:
        return describe_node(graph, i, names)

    owner: dict[int, int] = {}
    for g, group in enumerate(partition.groups):
        if not group:
            raise PartitionError(tr("group {g} is empty; remove it", g=g))
        for i in group:
            if not 0 <= i < n:
                raise PartitionError(tr(
                    "group {g} lists node index {i}, but the graph has {n} nodes (indices "
                    "0..{top})", g=g, i=i, n=n, top=n - 1,
                ))  # fmt: skip
            if graph.nodes[i].is_constant:
                raise PartitionError(tr(
                    "group {g} lists {node} (node {i}): constants are data, not kernels; "
                    "leave them out of every group", g=g, node=node(i), i=i,
                ))  # fmt: skip
            if i in owner:
                raise PartitionError(tr(
                    "{node} (node {i}) is in group {a} and in group {b}; put each node in "
                    "exactly one group", node=node(i), i=i, a=owner[i], b=g,
                ))  # fmt: skip
            owner[i] = g
    missing = [i for i in range(n) if not graph.nodes[i].is_constant and i not in owner]
    if missing:
        listed = listing(tr("{node} (node {i})", node=node(i), i=i) for i in missing)
        raise PartitionError(tr("{nodes} in no group; every op must be in exactly one group",
                                nodes=listed))  # fmt: skip

    dag = node_dag(graph)
    for g, group in enumerate(partition.groups):
        _check_convex(graph, dag, g, group, node)
    _check_group_order(graph, dag, partition, owner, node)


def group_outputs(graph: Graph, group: Sequence[int]) -> list[Value]:
    """The values ``group`` (node indices) writes out of its kernel, in graph order: graph
    outputs and values read by a node outside the group. The others stay inside the kernel
    (the rule: :func:`~chipsim.passes.fusion.boundary.kernel_boundary`).

    Example:
        >>> from chipsim.ir import GraphBuilder, f32
        >>> b = GraphBuilder()
        >>> x = b.input((4,), f32)
        >>> y = b.op("relu", x)
        >>> g = b.build(b.op("neg", y), y)
        >>> [g.names()[v] for v in group_outputs(g, [0, 1])]
        ['%1', '%2']
    """
    return list(kernel_boundary(graph, group).writes)


def node_dag(graph: Graph) -> nx.DiGraph:
    """The graph as a networkx DiGraph over node indices (edge = producer -> consumer)."""
    index = {n.output: i for i, n in enumerate(graph.nodes)}
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(graph.nodes)))
    for i, n in enumerate(graph.nodes):
        for v in n.inputs:
            if v in index:
                dag.add_edge(index[v], i)
    return dag


def is_convex(dag: nx.DiGraph, group: Sequence[int]) -> bool:
    """Whether no path leaves ``group`` (node indices of ``dag``, e.g. :func:`node_dag`) and
    comes back in.

    A walk from the nodes just outside the group, forward along the edges: the group is
    convex unless it reaches a member. Edges run from lower to higher indices (graph order
    is topological), so nodes after the group's last member cannot lead back and are not
    visited: the walk stays local to the group, whatever the size of the graph.
    """
    members, last = set(group), max(group)
    todo = [s for i in group for s in dag.successors(i) if s not in members and s < last]
    seen = set(todo)
    while todo:
        for s in dag.successors(todo.pop()):
            if s in members:
                return False
            if s < last and s not in seen:
                seen.add(s)
                todo.append(s)
    return True


def _check_convex(graph: Graph, dag: nx.DiGraph, g: int, group: tuple[int, ...], node) -> None:
    if is_convex(dag, group):
        return
    members = set(group)  # not convex: find the path that leaves and comes back, to name it
    reach_out = set().union(*(nx.descendants(dag, i) for i in group)) - members
    reach_in = set().union(*(nx.ancestors(dag, i) for i in group)) - members
    between = sorted(reach_out & reach_in)
    if not between:
        return
    via = between[0]
    src = next(i for i in group if nx.has_path(dag, i, via))
    dst = next(i for i in group if nx.has_path(dag, via, i))
    path = nx.shortest_path(dag, src, via)[:-1] + nx.shortest_path(dag, via, dst)
    arrow = " -> ".join(node(i) for i in path)
    raise PartitionError(tr(
        "group {g} ({kernel}) is not convex: the path {arrow} leaves the group at {via} and "
        "comes back in, so the kernel would wait for its own output. Put {via} into group {g} "
        "too, or split group {g}", g=g, kernel=kernel_name(graph, group), arrow=arrow,
        via=node(via),
    ))  # fmt: skip


def _check_group_order(graph, dag, partition, owner, node) -> None:
    quotient = nx.DiGraph()
    quotient.add_nodes_from(range(len(partition.groups)))
    witness: dict[tuple[int, int], tuple[int, int]] = {}
    for a, b in dag.edges:
        ga, gb = owner.get(a), owner.get(b)
        if ga is not None and gb is not None and ga != gb:
            quotient.add_edge(ga, gb)
            witness.setdefault((ga, gb), (a, b))
    try:
        cycle = nx.find_cycle(quotient)
    except nx.NetworkXNoCycle:
        cycle = []
    if cycle:
        steps = tr("; ").join(
            tr("group {a} -> group {b} via {src} -> {dst}", a=ga, b=gb,
               src=node(witness[ga, gb][0]), dst=node(witness[ga, gb][1]))
            for ga, gb in cycle
        )  # fmt: skip
        raise PartitionError(tr(
            "groups {groups} depend on each other in a cycle ({steps}); no order can run them. "
            "Merge them or regroup these nodes",
            groups=listing(str(ga) for ga, _ in cycle), steps=steps,
        ))  # fmt: skip
    for (ga, gb), (a, b) in sorted(witness.items(), key=lambda item: item[1][::-1]):
        if ga > gb:
            raise PartitionError(tr(
                "group {b} is listed before group {a}, but {reader} in group {b} reads {read} "
                "from group {a}; list the groups in topological order",
                a=ga, b=gb, reader=node(b), read=node(a),
            ))  # fmt: skip
