"""The autotuner: the cost-guided improvement step of the reference fusion.

:func:`autotune` takes a partition (the rule pass's, see
:mod:`chipsim.passes.fusion.reference`) and improves it by cost.

Rules cannot know sizes; :func:`~chipsim.passes.fusion.cost.kernel_cycles` can. Kernels run
one after another, so a partition costs about the sum of its kernels' estimates, and a change
that touches two kernels can be judged by re-estimating those two alone. Two moves, each
kept only when the estimate goes down:

1. **Merge** two neighbouring kernels (a producer and a kernel that reads from it), the
   merge that saves most first, until no merge pays. This is where the table's ``COST``
   cells are used: a prologue into a contraction, a reduction into a contraction, and two
   contractions in one kernel (NPU "layer fusion": the intermediate stays in SRAM).
2. **Move** one op into a neighbouring kernel, or out into a kernel of its own. Merging is
   greedy and can overshoot (a transpose that makes the whole kernel unable to stream rows);
   moving single ops repairs that.

Both repeat until neither helps. Every kernel they make must be *allowed*
(:meth:`CostSearch.allowed`): connected, convex, made of edges the rule table allows in some
round, reductions beside a contraction row-wise, and passing the capacity rule ``fits``
(the code generator's own under ``chipsim.compile``). A kernel with two or
more contractions must also row-tile with its weights whole in the kernels' share of SRAM,
because the code generator blocks only single-contraction kernels: otherwise it would spill.
The partition as a whole must stay schedulable (no two kernels waiting for each other).

With a measured cost (``kernel_cost``: compile hands
:func:`chipsim.codegen.feasibility.kernel_timer`, which runs each candidate kernel alone on
the simulator, as autotuners time candidates instead of trusting a formula) the measurement
replaces
the estimate, a kernel is measured only once it is known to be allowed, and the row-wise and
two-contraction rules are dropped (they exist only because the estimate cannot see what those
kernels cost; the code generator's no-spill check still applies).

The search is deterministic (candidates in graph order, ties to the smallest node index) and
re-estimates only the kernels a move touches, each group estimated once (memoised), so it
scales to a transformer block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import networkx as nx

from chipsim.ir.graph import Graph
from chipsim.ir.ops import Pattern
from chipsim.passes.fusion.capacity import fits as capacity_fits
from chipsim.passes.fusion.cost import (
    can_estimate,
    kernel_budget,
    kernel_cycles,
    mixes_rows,
    on_chip_limit,
)
from chipsim.passes.fusion.partition import Partition, is_convex, node_dag
from chipsim.passes.fusion.reference import estimate_fits, topological_groups
from chipsim.passes.fusion.rules import can_fuse, op_pattern
from chipsim.target import Chip

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("fusion",)

Group = tuple[int, ...]
MAX_PASSES = 8  # merge-and-move passes; each pass must lower the estimate, so few are needed


class CostSearch:
    """The cost-aware step for one graph and chip: estimates and checks, memoised per group.

    Args:
        graph: the graph being partitioned.
        chip: a chip with the fields :data:`~chipsim.passes.fusion.cost.CHIP_FIELDS`.
        fits: the capacity rule, ``fits(group) -> bool`` for a multi-op group.
        kernel_cost: optional measured cost of a group, used instead of the estimate
            :func:`~chipsim.passes.fusion.cost.kernel_cycles`.
    """

    def __init__(
        self,
        graph: Graph,
        chip: Chip,
        fits: Callable[[Sequence[int]], bool],
        kernel_cost: Callable[[Sequence[int]], int | None] | None = None,
    ) -> None:
        self.graph, self.chip, self.fits = graph, chip, fits
        self.kernel_cost = kernel_cost
        ops = [i for i, n in enumerate(graph.nodes) if not n.is_constant]
        self.dag = node_dag(graph).subgraph(ops).copy()
        self._cycles: dict[Group, int] = {}
        self._allowed: dict[Group, bool] = {}

    def cycles(self, group: Group) -> int:
        """Cycles of one kernel (0 for an empty group): measured if a ``kernel_cost`` was
        given, else estimated."""
        if not group:
            return 0
        if group not in self._cycles:
            measured = self.kernel_cost(group) if self.kernel_cost is not None else None
            if measured is not None:
                self._cycles[group] = int(measured)
            else:
                self._cycles[group] = kernel_cycles(self.graph, group, self.chip)
        return self._cycles[group]

    def allowed(self, group: Group) -> bool:
        """Whether ``group`` may be one kernel (see the module docstring)."""
        if group not in self._allowed:
            self._allowed[group] = self._check(group)
        return self._allowed[group]

    def _check(self, group: Group) -> bool:
        sub = self.dag.subgraph(group)
        pats = {i: op_pattern(self.graph.nodes[i].op) for i in group}
        return (
            nx.is_weakly_connected(sub)
            and all(can_fuse(pats[a], pats[b]) for a, b in sub.edges)
            # two rules that only guard the estimate; a measured cost already knows better
            and (
                self.kernel_cost is not None
                or (_rowwise_heavy(self.graph, group) and self._layer_fusion_fits(group, pats))
            )
            and is_convex(self.dag, group)
            and (len(group) == 1 or self.fits(group))
        )

    def _layer_fusion_fits(self, group: Group, pats: dict[int, Pattern]) -> bool:
        """Two or more contractions share a kernel only if it row-tiles without spilling, and
        only to keep a big intermediate on chip: small ones stay in the SRAM arena anyway, and
        separate layers are easier to read and to plan."""
        if sum(p == Pattern.CONTRACTION for p in pats.values()) < 2:
            return True
        nodes = [self.graph.nodes[i] for i in group]
        rows = {n.output.shape[0] for n in nodes if n.output.type.rank >= 2}
        return (
            len(rows) == 1
            and any(n.type.nbytes > on_chip_limit(self.chip) for n in nodes)
            and not any(mixes_rows(self.graph, i) for i in group)
            and capacity_fits(self.graph, group, kernel_budget(self.chip))
        )

    def schedulable(self, groups: list[Group]) -> bool:
        """Whether the kernels can run in some order (their dependencies have no cycle)."""
        owner = {i: g for g, group in enumerate(groups) for i in group}
        quotient = nx.DiGraph()
        quotient.add_nodes_from(range(len(groups)))
        quotient.add_edges_from(
            (owner[a], owner[b]) for a, b in self.dag.edges if owner[a] != owner[b]
        )
        return nx.is_directed_acyclic_graph(quotient)

    # -- the two moves -----------------------------------------------------------------------
    def merge(self, groups: list[Group]) -> list[Group]:
        """Merge neighbouring kernels, largest estimated saving first, while one pays."""
        while True:
            owner = {i: g for g, group in enumerate(groups) for i in group}
            candidates: list[tuple[int, int, int]] = []
            for a, b in sorted(self.dag.edges):
                p, q = owner[a], owner[b]
                if p == q:
                    continue
                merged = tuple(sorted(groups[p] + groups[q]))
                if self.kernel_cost is not None and not self.allowed(merged):
                    continue  # measure only kernels that may exist (measuring costs time)
                saving = self.cycles(groups[p]) + self.cycles(groups[q]) - self.cycles(merged)
                if saving > 0:
                    candidates.append((-saving, p, q))
            for _, p, q in sorted(candidates):
                merged = tuple(sorted(groups[p] + groups[q]))
                trial = [g for k, g in enumerate(groups) if k not in (p, q)] + [merged]
                if self.allowed(merged) and self.schedulable(trial):
                    groups = trial
                    break
            else:
                return groups

    def move(self, groups: list[Group]) -> list[Group]:
        """Move single ops to a neighbouring kernel or into their own, while that pays."""
        for i in sorted(self.dag.nodes):
            owner = {j: g for g, group in enumerate(groups) for j in group}
            home = owner[i]
            targets = sorted({owner[j] for j in nx.all_neighbors(self.dag, i)} - {home})
            best, best_delta = None, 0
            for t in [*targets, None]:  # None: a kernel of its own
                if t is None and len(groups[home]) == 1:
                    continue
                left = tuple(j for j in groups[home] if j != i)
                joined = tuple(sorted((*groups[t], i))) if t is not None else (i,)
                if self.kernel_cost is not None and not all(
                    self.allowed(g) for g in (left, joined) if g
                ):
                    continue
                before = self.cycles(groups[home]) + (
                    self.cycles(groups[t]) if t is not None else 0
                )
                delta = self.cycles(left) + self.cycles(joined) - before
                if delta >= best_delta:
                    continue
                trial = [g for k, g in enumerate(groups) if k not in (home, t)]
                trial += [g for g in (left, joined) if g]
                if all(self.allowed(g) for g in (left, joined) if g) and self.schedulable(trial):
                    best, best_delta = trial, delta
            if best is not None:
                groups = best
        return groups

    def improve(self, groups: list[Group]) -> list[Group]:
        """Merge, then move, until a pass changes nothing (at most :data:`MAX_PASSES`)."""
        for _ in range(MAX_PASSES):
            new = self.move(self.merge(groups))
            if sorted(new) == sorted(groups):
                break
            groups = new
        return sorted(groups)


def autotune(
    graph: Graph,
    chip: Chip,
    partition: Partition,
    *,
    fits: Callable[[Sequence[int]], bool] | None = None,
    kernel_cycles: Callable[[Sequence[int]], int | None] | None = None,
) -> Partition:
    """Improve ``partition`` by cost: merge and move kernels while the cost goes down.

    Args:
        graph: the graph ``partition`` divides.
        chip: the chip; one without the fields the estimate reads
            (:data:`~chipsim.passes.fusion.cost.CHIP_FIELDS`) leaves ``partition`` as it is.
        partition: the starting point, e.g. the rule pass's.
        fits: the capacity rule (default: the estimate within the kernels' share of SRAM).
        kernel_cycles: measured cost of a group, ``None`` where it cannot be measured
            (default: the estimate alone).
    """
    if chip is None or not can_estimate(chip):
        return partition
    search = CostSearch(graph, chip, fits or estimate_fits(graph, chip, None), kernel_cycles)
    return topological_groups(graph, search.improve([tuple(g) for g in partition.groups]))


def _rowwise_heavy(graph: Graph, group: Group) -> bool:
    """A reduction may share a kernel with a contraction only if it works row by row
    (its op's row rule): then each row tile of the kernel finishes its own reductions; a
    reduction across rows would need the whole contraction output first."""
    pats = [op_pattern(graph.nodes[i].op) for i in group]
    if Pattern.CONTRACTION not in pats:
        return True
    return not any(
        pat == Pattern.REDUCTION and mixes_rows(graph, i)
        for i, pat in zip(group, pats, strict=True)
    )
