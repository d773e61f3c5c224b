"""Canonical depth-first search: is there a plan whose arena is at most ``cap``?

Helper of :mod:`.search`, after the ideas of Moffitt's MiniMalloc (*MiniMalloc: A Lightweight
Memory Allocator for Hardware-Accelerated Machine Learning*, ASPLOS 2023; written from the
paper's ideas, no code taken). Any plan can be pushed *down* until every tensor rests on a
tensor below it or on 0 without growing the arena. Listed by offset, such a plan places each
tensor at its *floor* (the top of the tensors already placed that overlap it in time), in
non-decreasing offset order. So the search only builds plans that way:

* **Branching.** The next tensor is any tensor whose floor is not below the last offset used
  (ties by a fixed *rank*, so each plan is built in one order only); it goes at its floor.
* **The lower bound as a cut.** In each section of time (see :mod:`.search_problem`) the
  unplaced tensors live there must still fit between the section's floor and ``cap``. A
  section's floor is the highest of: the top of what is placed in it, the last offset used,
  and the lowest floor of its unplaced tensors. When they do not fit, the branch is cut. With
  ``cap`` at the lower bound this leaves no room for any hole, which is why tight instances
  are found or refuted quickly.
* **Dominance.** If some unplaced tensor would fit wholly below the next offset, the plan being
  built has a needless hole: a better one puts that tensor there first, so the branch is cut.
  A tensor that no unplaced tensor overlaps (nothing will ever rest on it) is placed once,
  without trying the others instead.
* **Decomposition.** When no unplaced tensor is live on both sides of some moment, the two
  sides no longer interact: each is solved on its own, and if one side has no plan the other
  side's alternatives are not tried again.

The search is complete: when it runs out of branches without being stopped, no plan fits
under ``cap`` (a proof, used to raise the lower bound). It counts one work unit per node.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> from chipsim.passes.memory.search_problem import Effort, Instance
    >>> recs = [UsageRecord("a", 64, 0, 2), UsageRecord("b", 64, 1, 3), UsageRecord("c", 64, 0, 1),
    ...         UsageRecord("d", 64, 2, 3)]
    >>> inst = Instance(recs, 64)
    >>> fit_under(inst, 128, [0, 1, 2, 3], Effort(10.0), 1000)
    ('found', [0, 64, 64, 0])
    >>> fit_under(inst, 64, [0, 1, 2, 3], Effort(10.0), 1000)[0]
    'infeasible'
"""

from __future__ import annotations

from collections.abc import Sequence

from chipsim.passes.memory.search_problem import Effort, Instance

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("memory_planning",)

FOUND, INFEASIBLE, STOPPED = "found", "infeasible", "stopped"

#: Deepest nesting of decompositions (each is a Python call; beyond this, no decomposition).
MAX_NESTING = 100


class _Stop(Exception):
    """The node limit or the effort ran out (caught by :func:`fit_under`)."""


def fit_under(
    inst: Instance, cap: int, rank: Sequence[int], effort: Effort, node_limit: int
) -> tuple[str, list[int] | None]:
    """Look for a plan with arena at most ``cap``.

    Args:
        inst: the instance.
        cap: the arena size to stay within.
        rank: a number per tensor that breaks ties between tensors with the same floor (lower
            first); it is the search's preference, and different ranks find different plans.
        effort: the shared budget; one unit per node.
        node_limit: give up after this many nodes of this search.

    Returns:
        ``("found", offsets)``, ``("infeasible", None)`` when no plan fits (proved), or
        ``("stopped", None)`` when the node limit or the effort ran out first.
    """
    if inst.lower_bound > cap:
        return INFEASIBLE, None
    search = _Search(inst, cap, rank, effort, node_limit)
    items = [i for i in range(len(inst)) if inst.sizes[i] > 0]
    try:
        found = all(search.solve(group, 0) is not None for group in search.groups(items))
    except _Stop:
        return STOPPED, None
    return (FOUND, search.offsets) if found else (INFEASIBLE, None)


class _Search:
    """The state of one search: offsets, floors and the bytes still to place per section."""

    def __init__(
        self, inst: Instance, cap: int, rank: Sequence[int], effort: Effort, node_limit: int
    ) -> None:
        self.inst, self.cap, self.rank = inst, cap, rank
        self.effort, self.node_limit, self.nodes = effort, node_limit, 0
        n = len(inst)
        self.offsets = [0 if s == 0 else -1 for s in inst.sizes]
        self.floor_of = [0] * n  # per tensor: top of the placed tensors that overlap it
        self.top = [0] * inst.num_sections  # per section: top of the placed tensors
        # Per section: an unplaced tensor whose floor was low enough at the last check (a hint
        # that saves a scan; it is checked again before use).
        self.witness = [m[0] if m else 0 for m in inst.members]
        self.todo = list(inst.section_bytes)  # per section: bytes of the unplaced tensors
        # Per boundary between sections k and k + 1: unplaced tensors live on both sides.
        self.cuts = [0] * max(inst.num_sections - 1, 0)
        for i, (a, b) in enumerate(inst.spans):
            if inst.sizes[i]:
                for k in range(a, b - 1):
                    self.cuts[k] += 1

    def groups(self, items: list[int]) -> list[list[int]]:
        """``items`` split where no item is live on both sides, in time order."""
        spans = self.inst.spans
        out: list[list[int]] = []
        reach = -1
        for i in sorted(items, key=lambda k: (spans[k][0], k)):
            if spans[i][0] >= reach:
                out.append([])
            out[-1].append(i)
            reach = max(reach, spans[i][1])
        return out

    def solve(self, items: list[int], nesting: int) -> list[tuple] | None:
        """Place ``items`` (a group that no cut splits) under the cap; return the undo log of
        what was placed, or None (state unchanged) if no plan exists."""
        spans = self.inst.spans
        lo = min(spans[i][0] for i in items)
        hi = max(spans[i][1] for i in items)
        # A frame: [candidates, next index, undo of the move being explored, lone move?].
        stack = [[self._candidates(items, -1, -1), 0, None, False]]
        while stack:
            frame = stack[-1]
            if frame[2] is not None:
                self._undo(frame[2])
                frame[2] = None
                if frame[3]:
                    frame[1] = len(frame[0])  # nothing rests on it: the others fail alike
            cands, k = frame[0], frame[1]
            if k == len(cands):
                stack.pop()
                continue
            frame[1] = k + 1
            i = cands[k]
            x = self.floor_of[i]
            undo, alone, split = self._place(i, x)
            frame[2], frame[3] = undo, alone
            self.nodes += 1
            if self.nodes > self.node_limit or not self.effort.spend():
                raise _Stop
            if not self._fits(x, lo, hi):
                continue
            rest = [j for j in items if self.offsets[j] < 0]
            if not rest:
                return [f[2] for f in stack]
            if split and nesting < MAX_NESTING:
                parts = self.groups(rest)
                if len(parts) > 1:
                    logs = self._solve_all(parts, nesting + 1)
                    if logs is None:
                        continue
                    return [f[2] for f in stack] + logs
            stack.append([self._candidates(rest, x, self.rank[i]), 0, None, False])
        return None

    def _solve_all(self, parts: list[list[int]], nesting: int) -> list[tuple] | None:
        """Solve independent groups one after the other; undo them all if one fails."""
        logs: list[tuple] = []
        for part in parts:
            log = self.solve(part, nesting)
            if log is None:
                for undo in reversed(logs):
                    self._undo(undo)
                return None
            logs += log
        return logs

    def _candidates(self, rest: list[int], x: int, r: int) -> list[int]:
        """Tensors of ``rest`` that may go next after one placed at ``x`` with rank ``r``,
        best first."""
        floor_of, sizes, rank = self.floor_of, self.inst.sizes, self.rank
        lowest_top = min(floor_of[i] + sizes[i] for i in rest)
        if lowest_top <= x:
            return []  # a tensor fits wholly below x: this plan has a needless hole
        cands = [
            i
            for i in rest
            if (floor_of[i] > x or (floor_of[i] == x and rank[i] > r)) and floor_of[i] < lowest_top
        ]
        cands.sort(key=lambda i: (floor_of[i], rank[i]))
        return cands

    def _place(self, i: int, x: int) -> tuple[tuple, bool, bool]:
        """Put tensor ``i`` at ``x``; return its undo, whether nothing unplaced overlaps it, and
        whether it freed a cut (the unplaced tensors may fall into independent groups)."""
        inst = self.inst
        size = inst.sizes[i]
        top = x + size
        offsets, floor_of, todo, cuts = self.offsets, self.floor_of, self.todo, self.cuts
        offsets[i] = x
        raised, alone = [], True
        for j in inst.neighbours[i]:
            if offsets[j] < 0:
                alone = False
                if floor_of[j] < top:
                    raised.append((j, floor_of[j]))
                    floor_of[j] = top
        a, b = inst.spans[i]
        old_top = self.top[a:b]
        self.top[a:b] = [top] * (b - a)
        for k in range(a, b):
            todo[k] -= size
        split = False
        for k in range(a, b - 1):
            cuts[k] -= 1
            split = split or cuts[k] == 0
        return (i, raised, old_top), alone, split

    def _undo(self, undo: tuple) -> None:
        i, raised, old_top = undo
        inst = self.inst
        size = inst.sizes[i]
        a, b = inst.spans[i]
        self.top[a:b] = old_top
        todo, cuts, floor_of = self.todo, self.cuts, self.floor_of
        for k in range(a, b):
            todo[k] += size
        for k in range(a, b - 1):
            cuts[k] += 1
        for j, value in reversed(raised):
            floor_of[j] = value
        self.offsets[i] = -1

    def _fits(self, x: int, lo: int, hi: int) -> bool:
        """The cut: in every section of ``[lo, hi)`` the bytes still to place fit between the
        section's floor and the cap.

        The floor is the highest of the placed tops, ``x`` and the lowest floor of the unplaced
        tensors; for the last, it is enough to find one unplaced tensor whose floor is low
        enough (the witness), and the one found last time usually still is.
        """
        cap, witness = self.cap, self.witness
        offsets, floor_of, members = self.offsets, self.floor_of, self.inst.members
        room_x = cap - x
        k = lo
        for t, f in zip(self.todo[lo:hi], self.top[lo:hi], strict=False):
            if t:
                room = cap - t  # the floor may be at most this
                if f > room or t > room_x:
                    return False
                w = witness[k]
                if offsets[w] >= 0 or floor_of[w] > room:
                    for j in members[k]:
                        if offsets[j] < 0 and floor_of[j] <= room:
                            witness[k] = j
                            break
                    else:
                        return False
            k += 1
        return True
