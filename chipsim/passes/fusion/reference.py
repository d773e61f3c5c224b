"""The rule pass of the reference fusion, and two simple alternatives.

The reference fusion ``chipsim.compile`` runs is two readable parts composed in the open (see
:func:`chipsim.compiler.fusion.reference_fusion`): this **rule pass**, then a cost-guided
improvement step, the autotuner (:func:`~chipsim.passes.fusion.search.autotune`).

``rule_fusion`` grows kernels from the graph's outputs backwards. Every op starts as its own
group. Then, in each round of the rule table (``rules.py``), the groups are visited from last
to first; a group ``G`` whose last op is ``p`` joins the group of its consumers when three
rules agree:

1. **Post-dominator rule.** The candidate group is that of ``p``'s *immediate
   post-dominator* ``d``: the first op that every path from ``p`` to the graph's outputs goes
   through. ``G`` joins only if all of ``p``'s users are already in ``d``'s group, i.e. every
   path from ``p`` to ``d`` stays inside the kernel. Why: if ``p`` had a user outside the
   kernel, fusing ``p`` would either force that user to recompute ``p`` (duplicating an
   expensive producer) or force the kernel to write ``p``'s result to memory anyway (the
   extra write fusion was meant to save). A value that is a graph output is post-dominated
   only by the exit, so it ends its kernel. Post-dominators are dominators of the reversed
   graph, so we compute them with ``networkx.immediate_dominators`` on the reversed graph
   with one extra *exit* node after all outputs.
2. **Pattern rule.** :func:`~chipsim.passes.fusion.rules.can_fuse` must allow ``G``'s
   pattern to join the consumer group's pattern in this round.
3. **Capacity rule.** The merged group must fit: ``fits(group)``. Compile hands the code
   generator's own rule (:func:`chipsim.codegen.feasibility.kernel_fits`: it plans the
   kernel without spilling and, on a GPU, needs no grid-wide barrier); alone, the pass uses
   the estimate :func:`~chipsim.passes.fusion.capacity.fits` within the SRAM share kernels
   get. A single op always forms a group; the code generator then has to stream it.

Because each op is in exactly one group, nothing is ever duplicated; and because an op only
joins a group that holds *all* its users, every group is convex.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4,), f32)
    >>> y = b.op("mul", b.op("add", x, b.const(1.0)), b.const(2.0))
    >>> g = b.build(y)
    >>> print(rule_fusion(g))
    fused_add_mul: %2 %4
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import networkx as nx

from chipsim.errors import PassError
from chipsim.ir.graph import Graph
from chipsim.passes.fusion.capacity import fits as capacity_fits
from chipsim.passes.fusion.cost import kernel_budget
from chipsim.passes.fusion.partition import Partition, node_dag
from chipsim.passes.fusion.rules import ROUNDS, Pattern, can_fuse, group_pattern, op_pattern
from chipsim.reference import reference_for
from chipsim.target import Chip

EXIT = "exit"  # the virtual node after every graph output


def op_indices(graph: Graph) -> list[int]:
    """Indices of the nodes that are kernels' work: every node except constants."""
    return [i for i, n in enumerate(graph.nodes) if not n.is_constant]


@reference_for("fusion")
def users_of(graph: Graph) -> dict[int, list[int]]:
    """For each op index, the indices of the ops that read its result (graph order)."""
    index = {n.output: i for i, n in enumerate(graph.nodes)}
    users: dict[int, list[int]] = {i: [] for i in op_indices(graph)}
    for j, n in enumerate(graph.nodes):
        for v in n.inputs:
            i = index.get(v)
            if i in users and j not in users[i]:
                users[i].append(j)
    return users


@reference_for("fusion")
def immediate_post_dominators(graph: Graph) -> dict[int, int | str]:
    """Each op's immediate post-dominator: an op index, or ``EXIT`` if only the exit is.

    An op whose result is a graph output, or whose paths reach the outputs without meeting
    again, is post-dominated only by the exit.
    """
    users = users_of(graph)
    outputs = {n.output for n in graph.nodes if not n.is_constant} & set(graph.outputs)
    reverse = nx.DiGraph()
    reverse.add_node(EXIT)
    for i, us in users.items():
        reverse.add_node(i)
        for u in us:
            reverse.add_edge(u, i)  # reversed: consumer -> producer
        if graph.nodes[i].output in outputs or not us:
            reverse.add_edge(EXIT, i)
    idom = nx.immediate_dominators(reverse, EXIT)
    return {i: idom[i] for i in users}


@reference_for("fusion")
def rule_fusion(
    graph: Graph,
    chip: Chip | None = None,
    *,
    fits: Callable[[Sequence[int]], bool] | None = None,
    sram_budget: int | None = None,
) -> Partition:
    """Fuse ``graph``'s ops into kernels by the rules in the module docstring (rules 1-3).

    Args:
        graph: the graph to partition.
        chip: optional; without ``fits``, its SRAM share for kernel tiles
            (:func:`~chipsim.passes.fusion.cost.kernel_budget`) bounds the capacity estimate.
        fits: the capacity rule, ``fits(group) -> bool`` for a multi-op group (node indices).
            ``chipsim.compile``'s reference pass hands the code generator's own
            (:func:`chipsim.codegen.feasibility.kernel_fits`); without it, the estimate
            :func:`~chipsim.passes.fusion.capacity.fits` is used.
        sram_budget: bytes for the estimate; overrides the chip's share when given.

    Returns:
        A valid :class:`Partition`, printing with the graph's names.
    """
    fits = fits or estimate_fits(graph, chip, sram_budget)
    users = users_of(graph)
    ipdom = immediate_post_dominators(graph)
    group_of = {p: [p] for p in op_indices(graph)}  # op index -> its group (shared lists)
    for round in ROUNDS:
        for p in reversed(op_indices(graph)):
            group = group_of[p]
            if p != max(group):
                continue  # visit each group once, at its last op
            d = ipdom[p]
            target = group_of[d] if d != EXIT else None
            joins = (
                target is not None
                and all(u in target for u in users[p])  # every path p -> d stays in the kernel
                and can_fuse(_pattern(graph, group), _pattern(graph, target), round)
                and fits(sorted(group + target))
            )
            if joins:
                target.extend(group)
                for i in group:
                    group_of[i] = target
    return _as_partition(graph, group_of)


@reference_for("fusion")
def estimate_fits(
    graph: Graph, chip: Chip, sram_budget: int | None
) -> Callable[[Sequence[int]], bool]:
    """The capacity estimate as a rule: the kernels' share of SRAM, or no limit without one."""
    if sram_budget is not None:
        budget: int | None = int(sram_budget)
    elif chip is None:
        budget = None
    else:
        try:
            budget = kernel_budget(chip)
        except (AttributeError, TypeError):
            raise PassError(
                "fusion needs chip.sram.capacity_bytes (an int) to respect the SRAM size; "
                f"{chip!r} has none. Pass a chip, sram_budget=..., or chip=None"
            ) from None
    return lambda group: capacity_fits(graph, group, budget)


@reference_for("fusion")
def _pattern(graph: Graph, group: list[int]) -> Pattern:
    return group_pattern(graph.nodes[i].op for i in group)


@reference_for("fusion")
def _as_partition(graph: Graph, group_of: dict[int, list[int]]) -> Partition:
    """Collect the distinct groups, ordered by their first node (a topological order)."""
    groups: dict[int, tuple[int, ...]] = {}
    for members in group_of.values():
        ordered = tuple(sorted(members))
        groups[ordered[0]] = ordered
    return topological_groups(graph, list(groups.values()))


@reference_for("fusion")
def topological_groups(graph: Graph, groups: list[tuple[int, ...]]) -> Partition:
    """A partition of ``groups`` listed in a topological order (ties: smallest first node)."""
    owner = {i: g for g, group in enumerate(groups) for i in group}
    quotient = nx.DiGraph()
    quotient.add_nodes_from(range(len(groups)))
    for a, b in node_dag(graph).edges:
        if a in owner and b in owner and owner[a] != owner[b]:
            quotient.add_edge(owner[a], owner[b])
    order = nx.lexicographical_topological_sort(quotient, key=lambda g: groups[g][0])
    return Partition([groups[g] for g in order], graph=graph)


def no_fusion(graph: Graph, chip: Chip | None = None) -> Partition:
    """Every op is its own kernel (what eager execution does)."""
    return Partition([(i,) for i in op_indices(graph)], graph=graph)


@reference_for("fusion")
def fuse_elementwise_chains(graph: Graph, chip: Chip | None = None) -> Partition:
    """A simpler pass: only fuse an elementwise/broadcast op into its single user's group
    when that group is elementwise/broadcast too (no reductions, no epilogues, no SRAM check).
    """
    users = users_of(graph)
    cheap = (Pattern.ELEMENTWISE, Pattern.BROADCAST)
    group_of: dict[int, list[int]] = {}
    outputs = set(graph.outputs)
    for p in reversed(op_indices(graph)):
        us = users[p]
        target = group_of.get(us[0]) if len(us) == 1 else None
        if (
            target is not None
            and graph.nodes[p].output not in outputs
            and op_pattern(graph.nodes[p].op) in cheap
            and _pattern(graph, target) in cheap
        ):
            target.append(p)
            group_of[p] = target
        else:
            group_of[p] = [p]
    return _as_partition(graph, group_of)
