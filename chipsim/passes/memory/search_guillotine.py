"""Guillotine recovery: an exact planner for tensors that tile the arena without holes.

Picture the plan as rectangles in the time x address plane. When the live bytes are the same
at every step, an optimal plan (arena == lower bound) must fill the picture completely. Many
such tilings are *guillotine* tilings: the whole rectangle is cut in two by one straight cut,
across time or across addresses, and each half is cut again, and so on down to single tensors.
This module recovers those cuts. ``solve(S, height)`` packs a set ``S`` of tensors whose live
bytes are ``height`` at every step of their span ``[t0, t1)`` into ``height`` bytes:

1. *Spanning tensors*: a tensor live during all of ``[t0, t1)`` meets every other tensor, so it
   can go at the bottom, and the rest is solved ``size`` bytes higher with ``height - size``.
2. *Time cut*: if no tensor is live across some step ``t`` (live at ``t - 1`` and at ``t``),
   the tensors before ``t`` and those from ``t`` on never meet; each side is solved on its
   own at the same base offset.
3. *Address cut*: otherwise look for a *band*: a proper subset ``A`` whose live bytes are also
   constant, ``h < height``, on ``[t0, t1)``. ``A`` is solved at the base with height ``h`` and
   the rest above it with ``height - h``. To find bands, sweep time from ``t0``: at ``t0`` pick
   some tensors that start there (always including one *anchor*, so that ``A`` and its
   complement are not both found); at each later step where chosen tensors end, the band
   stays constant only if the chosen tensors starting at that step have exactly the bytes that
   ended (a small subset-sum problem). Every way to do this is tried, depth first, and a band
   whose halves cannot be solved is given up for the next one (backtracking).

Steps 1 and 2 never lose a solution, and step 3 tries every band that contains the anchor, so
the search finds a plan whenever a guillotine tiling exists (and its effort budget allows).
The budget counts search steps, never a clock, so the result is the same on every machine.
Sets that failed are remembered, so a band that comes up again is not solved twice.

Example:
    >>> # a 2-step x 192 B picture: a (128 B) then b + c (64 B each) at the bottom, d on top.
    >>> first, last, sizes = [0, 1, 1, 0], [1, 2, 2, 2], [128, 64, 64, 64]
    >>> pack_guillotine(first, last, sizes)
    [64, 64, 128, 0]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from chipsim.passes.memory.search_bands import sweep_bands

#: Default effort: search steps (states visited) before giving up.
DEFAULT_BUDGET = 100_000

#: Sweeps per direction when looking for a band (any one of them would list every band).
MAX_ANCHORS = 16

#: Deepest nesting of cuts tried (keeps well inside Python's recursion limit).
MAX_DEPTH = 150


class _GiveUp(Exception):
    """Raised inside the search when its budget or depth is spent (caught by pack_guillotine)."""


def pack_guillotine(
    first: Sequence[int],
    last: Sequence[int],
    sizes: Sequence[int],
    budget: int = DEFAULT_BUDGET,
) -> list[int] | None:
    """Offsets of a plan whose arena equals the lower bound, or None if none is found.

    Only instances whose live bytes are the same at every step of ``[min(first), max(last))``
    qualify; for others (and when the budget runs out) the answer is None.

    Args:
        first, last: half-open lifetimes ``[first, last)`` per tensor.
        sizes: aligned sizes per tensor (0-byte tensors get offset 0).
        budget: search steps to try before giving up.
    """
    items = [i for i, s in enumerate(sizes) if s > 0]
    height = constant_profile(first, last, sizes, items)
    if height is None:
        return None
    solver = _Guillotine(first, last, sizes, budget)
    try:
        found = not items or solver.solve(items, height, 0)
    except _GiveUp:
        return None
    return solver.offsets if found else None


def constant_profile(
    first: Sequence[int], last: Sequence[int], sizes: Sequence[int], items: Sequence[int]
) -> int | None:
    """The live bytes of ``items`` if they are the same at every step of their span, else None."""
    if not items:
        return 0
    t0 = min(first[i] for i in items)
    t1 = max(last[i] for i in items)
    delta = [0] * (t1 - t0 + 1)
    for i in items:
        delta[first[i] - t0] += sizes[i]
        delta[last[i] - t0] -= sizes[i]
    height = delta[0]
    running = 0
    for d in delta[:-1]:
        running += d
        if running != height:
            return None
    return height


class _Guillotine:
    """The recursive search of the module docstring; ``offsets`` holds the plan it builds."""

    def __init__(self, first, last, sizes, budget: int) -> None:
        self.first, self.last, self.sizes = first, last, sizes
        self.budget = budget
        self.steps = 0
        self.offsets = [0] * len(sizes)
        self.failed: set[tuple[tuple[int, ...], int]] = set()
        # Time run backward, for sweeps from the end: [first, last) becomes [-last, -first).
        self.back_first = [-t for t in last]
        self.back_last = [-t for t in first]

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise _GiveUp

    def solve(self, items: list[int], height: int, base: int, depth: int = 0) -> bool:
        """Place ``items`` (live bytes ``height`` at every step) in ``[base, base + height)``."""
        key = (tuple(sorted(items)), height)
        if key in self.failed:
            return False
        if depth > MAX_DEPTH:
            raise _GiveUp
        if self._solve(items, height, base, depth + 1):
            return True
        self.failed.add(key)
        return False

    def _solve(self, items: list[int], height: int, base: int, depth: int) -> bool:
        self.tick()
        first, last, sizes = self.first, self.last, self.sizes
        t0 = min(first[i] for i in items)
        t1 = max(last[i] for i in items)
        rest = []
        for i in items:  # 1. spanning tensors go to the bottom
            if first[i] == t0 and last[i] == t1:
                self.offsets[i] = base
                base += sizes[i]
                height -= sizes[i]
            else:
                rest.append(i)
        if not rest:
            return True
        groups = self._time_groups(rest)
        if len(groups) > 1:  # 2. time cuts: the groups never meet
            return all(self.solve(group, height, base, depth) for group in groups)
        for band in self._bands(rest, t0, t1):  # 3. address cut: a band at the bottom
            chosen = set(band)
            upper = [i for i in rest if i not in chosen]
            low = sum(sizes[i] for i in band if first[i] == t0)
            if self.solve(band, low, base, depth) and self.solve(
                upper, height - low, base + low, depth
            ):
                return True
        return False

    def _time_groups(self, items: list[int]) -> list[list[int]]:
        """Split ``items`` at every step that no tensor is live across."""
        groups: list[list[int]] = []
        reach = -1
        for i in sorted(items, key=lambda k: (self.first[k], k)):
            if self.first[i] >= reach:
                groups.append([])
            groups[-1].append(i)
            reach = max(reach, self.last[i])
        return groups

    def _bands(self, items: list[int], t0: int, t1: int) -> Iterator[list[int]]:
        """Bands of ``items`` from sweeps that take turns, one per anchor and direction.

        Each opener (starting at ``t0``) anchors a forward sweep and each closer (ending at
        ``t1``) a backward one. A band with few tensors is found quickly by a sweep anchored
        in it, so the sweeps run a few states at a time, in turn. One finished sweep has
        listed every band that holds its anchor, and so every way to cut: then we stop.
        """
        first, last, sizes = self.first, self.last, self.sizes
        back_first, back_last = self.back_first, self.back_last
        order = sorted(items, key=lambda k: (-sizes[k], k))
        openers = [a for a in order if first[a] == t0][:MAX_ANCHORS]
        closers = [a for a in order if last[a] == t1][:MAX_ANCHORS]
        sweeps = [sweep_bands(first, last, sizes, items, t0, t1, a, self.tick) for a in openers]
        sweeps += [
            sweep_bands(back_first, back_last, sizes, items, -t1, -t0, a, self.tick)
            for a in closers
        ]
        while True:
            for sweep in sweeps:
                for band in sweep:
                    if band is None:
                        break  # its turn is over
                    yield band
                else:
                    return  # this sweep is done: every band has been listed
