"""Bands: subsets of tensors whose live bytes stay constant, found by a sweep over time.

Helper of :mod:`.search_guillotine`. The tensors ``items`` are live on ``[t0, t1)`` with the
same total bytes at every step. A *band* is a proper subset with the same property (a
horizontal strip of a hole-free plan). :func:`sweep_bands` lists every band that holds a given
*anchor* tensor (one that starts at ``t0``), depth first:

* A tensor's membership only matters at the step where it starts and the step where it ends:
  the band's bytes stay constant at ``t`` exactly when the members starting at ``t`` have as
  many bytes as the members ending at ``t``.
* So the sweep goes forward in time. A tensor that starts at ``t0`` (an *opener*, which no
  balance constrains where it starts) is decided where it ends; every other tensor is decided
  where it starts: at step ``t`` the members ending there are known, and the starters that
  join must have exactly their bytes (a small subset-sum problem, tried every way).
* The future of a state depends only on its step and on the bytes of the members still to end
  at each later step; a state that led to no band once is skipped when it comes up again.

Swap ``first`` and ``last`` with ``-last`` and ``-first`` and the same sweep runs backward in
time from a tensor that ends at ``t1``.

Example:
    >>> # Steps [0, 2), 192 B: a (64 B) then b (64 B); c (128 B) then d and e (64 B each).
    >>> first, last, sizes = [0, 1, 0, 1, 1], [1, 2, 1, 2, 2], [64, 64, 128, 64, 64]
    >>> [b for b in sweep_bands(first, last, sizes, [0, 1, 2, 3, 4], 0, 2, 0, lambda: None) if b]
    [[0, 1]]

    (``[0, 3]`` is a band too, but ``b``, ``d`` and ``e`` are alike: only one is listed.)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from math import gcd

#: A sweep yields None after this many states, so that several sweeps can take turns.
PAUSE_EVERY = 64


def sweep_bands(
    first: Sequence[int],
    last: Sequence[int],
    sizes: Sequence[int],
    items: list[int],
    t0: int,
    t1: int,
    anchor: int,
    tick: Callable[[], None],
) -> Iterator[list[int] | None]:
    """Every band of ``items`` that holds ``anchor``, with a None after every few states.

    Args:
        first, last: half-open lifetimes per tensor; ``items`` span exactly ``[t0, t1)``.
        sizes: aligned sizes per tensor.
        items: the tensors to choose from; their live bytes are constant on ``[t0, t1)``.
        anchor: a tensor of ``items`` that starts at ``t0``; every band listed holds it.
        tick: called once per state visited (it counts effort and may raise to stop).
    """
    starters: dict[int, list[int]] = {}
    for i in sorted(items, key=lambda k: (-sizes[k], last[k], k)):
        if i != anchor:
            starters.setdefault(first[i], []).append(i)
    openers: dict[int, list[int]] = {}
    for i in starters.pop(t0, []):
        openers.setdefault(last[i], []).append(i)
    opener_ends = sorted(openers)
    unit = gcd(*(sizes[i] for i in items))  # bit sets count bytes in this unit
    choices: dict[int, _Choices] = {}
    dead: set[tuple] = set()
    # A frame: [state key, iterator over the next states, whether a band came out of it].
    stack: list[list] = [[None, iter([([anchor], {last[anchor]: sizes[anchor]}, t0)]), False]]
    visited = 0
    while stack:
        frame = stack[-1]
        state = next(frame[1], None)
        if state is None:
            stack.pop()
            if not frame[2]:
                dead.add(frame[0])
            continue
        tick()
        visited += 1
        if visited % PAUSE_EVERY == 0:
            yield None
        band, pending, now = state
        key = (now, tuple(sorted(pending.items())))
        if key in dead:
            continue
        k = bisect_right(opener_ends, now)
        t = min(pending) if k == len(opener_ends) else min(min(pending), opener_ends[k])
        if t == t1:
            if len(band) < len(items):
                for f in stack:
                    f[2] = True
                yield band
            continue
        need = pending.pop(t, 0)
        if t not in choices:
            choices[t] = _Choices(starters.get(t, []), sizes, last, unit)
        moves = _step(band, pending, openers.get(t, []), choices[t], need, t, sizes, last)
        stack.append([key, moves, False])


class _Choices:
    """The tensors that start at one step, grouped by shape, with their reachable sums.

    ``reach[k]`` is a bit set: bit ``v`` is set when the groups from ``k`` on can make
    ``v * unit`` bytes. It lets the subset-sum search skip every dead end.
    """

    def __init__(self, items: list[int], sizes, last, unit: int) -> None:
        self.groups = _shape_groups(items, sizes, last)
        self.size = [sizes[g[0]] // unit for g in self.groups]
        self.unit = unit
        self.reach = [1] * (len(self.groups) + 1)
        for k in range(len(self.groups) - 1, -1, -1):
            bits = self.reach[k + 1]
            for _ in self.groups[k]:
                bits |= bits << self.size[k]
            self.reach[k] = bits

    def sums_to(self, need: int) -> Iterator[list[int]]:
        """Subsets (up to swapping identical tensors) with exactly ``need`` bytes."""
        if need % self.unit == 0:
            yield from self._from(0, need // self.unit)

    def _from(self, k: int, need: int) -> Iterator[list[int]]:
        if not (self.reach[k] >> need) & 1:
            return
        if need == 0:
            yield []
            return
        group, size = self.groups[k], self.size[k]
        for count in range(min(len(group), need // size), -1, -1):
            for tail in self._from(k + 1, need - count * size):
                yield group[:count] + tail


def _step(band, pending, frees, choices: _Choices, need, t, sizes, last) -> Iterator[tuple]:
    """States after step ``t``: openers ending at ``t`` may join (their bytes add to ``need``),
    then starters at ``t`` with exactly the bytes needed join."""
    free_groups = _shape_groups(frees, sizes, last)
    for count in range(len(frees) + 1):
        for joined in _choose(free_groups, count):
            total = need + sum(sizes[i] for i in joined)
            for chosen in choices.sums_to(total):
                later = dict(pending)
                for i in chosen:
                    later[last[i]] = later.get(last[i], 0) + sizes[i]
                yield band + joined + chosen, later, t


def _choose(groups: list[list[int]], count: int) -> Iterator[list[int]]:
    """Subsets (up to swapping identical tensors) of ``groups`` with ``count`` tensors."""
    if count == 0:
        yield []
        return
    if not groups:
        return
    group, rest = groups[0], groups[1:]
    for take in range(min(len(group), count), -1, -1):
        yield from (group[:take] + tail for tail in _choose(rest, count - take))


def _shape_groups(items: list[int], sizes, last) -> list[list[int]]:
    """Group tensors of the same size and end: swapping two of them changes nothing."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i in items:
        groups.setdefault((sizes[i], last[i]), []).append(i)
    return list(groups.values())
