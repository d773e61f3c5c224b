"""Every valid partition of a small graph, for measuring a fusion pass against the optimum.

``all_partitions(graph)`` yields each partition of the graph's ops into groups that are

* **connected** (the ops of a group are linked by edges inside the group: a kernel is one
  piece of dataflow, not two unrelated computations side by side),
* **convex** (no path leaves a group and comes back in), and
* **schedulable** (the groups do not depend on each other in a cycle),

each exactly once, groups listed in a topological order. Fusion *rules* are deliberately not
applied: the cost model decides what is good. Disconnected groups, which
:func:`~chipsim.passes.fusion.partition.validate_partition` accepts, are not generated.

How: nodes are bits of an int. The first (smallest) unassigned op must be in the next group;
we list every connected convex set of unassigned ops containing it, and recurse on the rest.
The candidate sets depend only on which ops are still unassigned, so they are memoised. A
chain of 12 ops has 2**11 = 2048 partitions; a typical 12-op graph a few thousand.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4,), f32)
    >>> g = b.build(b.op("exp", b.op("relu", b.op("neg", x))))
    >>> [p.groups for p in all_partitions(g)]
    [((0, 1, 2),), ((0, 1), (2,)), ((0,), (1, 2)), ((0,), (1,), (2,))]
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

import networkx as nx

from chipsim.errors import PassError
from chipsim.ir.graph import Graph
from chipsim.passes.fusion.partition import Partition, node_dag
from chipsim.passes.fusion.reference import op_indices, topological_groups

MAX_OPS = 16  # beyond this the number of partitions explodes; 12 is the intended size


def _bits(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def all_partitions(graph: Graph, limit: int | None = None) -> Iterator[Partition]:
    """Yield the connected, convex, schedulable partitions of ``graph``'s ops.

    Args:
        graph: a graph with at most 16 non-constant ops (12 is the intended size).
        limit: stop after this many partitions (None: all of them).

    Raises:
        PassError: if the graph has too many ops to enumerate.
    """
    ops = op_indices(graph)
    if len(ops) > MAX_OPS:
        raise PassError(
            f"all_partitions enumerates graphs of at most {MAX_OPS} ops; this one has "
            f"{len(ops)}. Use a smaller graph"
        )
    # Work on positions 0..k-1 of the ops (constants dropped); edges between ops only.
    pos = {node: k for k, node in enumerate(ops)}
    dag = node_dag(graph).subgraph(ops)
    k = len(ops)
    succ = [0] * k
    nbr = [0] * k
    desc = [0] * k
    anc = [0] * k
    for a, b in dag.edges:
        succ[pos[a]] |= 1 << pos[b]
        nbr[pos[a]] |= 1 << pos[b]
        nbr[pos[b]] |= 1 << pos[a]
    for node in ops:
        for d in nx.descendants(dag, node):
            desc[pos[node]] |= 1 << pos[d]
            anc[pos[d]] |= 1 << pos[node]

    def convex(s: int) -> bool:
        out = inn = 0
        for i in _bits(s):
            out |= desc[i]
            inn |= anc[i]
        return (out & inn & ~s) == 0

    @cache
    def groups_from(free: int) -> tuple[int, ...]:
        """Connected convex subsets of ``free`` that contain its lowest op."""
        first = free & -free
        found, frontier = {first}, [first]
        while frontier:  # grow connected sets one neighbour at a time
            s = frontier.pop()
            grow = 0
            for i in _bits(s):
                grow |= nbr[i]
            grow &= free & ~s
            for i in _bits(grow):
                t = s | 1 << i
                if t not in found:
                    found.add(t)
                    frontier.append(t)
        return tuple(sorted((s for s in found if convex(s)), key=lambda s: (-s.bit_count(), s)))

    def acyclic(groups: list[int]) -> bool:
        owner = {i: g for g, s in enumerate(groups) for i in _bits(s)}
        quotient = nx.DiGraph()
        quotient.add_nodes_from(range(len(groups)))
        for g, s in enumerate(groups):
            for i in _bits(s):
                for j in _bits(succ[i]):
                    if owner[j] != g:
                        quotient.add_edge(g, owner[j])
        return nx.is_directed_acyclic_graph(quotient)

    count = 0

    def search(free: int, chosen: list[int]) -> Iterator[list[int]]:
        if not free:
            if len(chosen) < 3 or acyclic(chosen):  # 1-2 convex groups can't form a cycle
                yield chosen
            return
        for s in groups_from(free):
            yield from search(free & ~s, [*chosen, s])

    for masks in search((1 << k) - 1, []):
        groups = [tuple(ops[i] for i in _bits(s)) for s in masks]
        yield topological_groups(graph, groups)
        count += 1
        if limit is not None and count >= limit:
            return


def count_partitions(graph: Graph) -> int:
    """How many partitions :func:`all_partitions` yields for ``graph``."""
    return sum(1 for _ in all_partitions(graph))
