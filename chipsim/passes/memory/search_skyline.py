"""Skyline depth-first search: pack tensors under a fixed arena cap, wasting at most a budget.

The address x time picture is filled from the bottom. ``height[t]`` is the top of what is
placed (or given up as waste) at step ``t``; it is always a *skyline*, never with holes below.
At the lowest, leftmost point ``(a, low)`` of the skyline, the step before ``a`` is higher, so
a tensor that covers that point must start exactly at ``a`` and end by the end ``b`` of the
flat stretch. The search tries those tensors there, and as a last resort gives the stretch up
as waste (raises it to its lower neighbour). Waste is limited by the area left over under the
cap: ``cap * steps - sum(size * length)``; on a tight instance with ``cap`` equal to the lower
bound no waste is allowed at all, and a success proves the plan optimal.

Depth-first search can get stuck for ages below one early bad choice, so it runs in short,
randomised restarts (a fixed number of placements each: deterministic, never a clock).

Example:
    >>> import random
    >>> first, last, sizes = [0, 0, 1], [1, 2, 2], [64, 64, 64]
    >>> fill_skyline(first, last, sizes, 128, random.Random(0), 100)
    [64, 0, 64]
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def fill_skyline(
    first: Sequence[int],
    last: Sequence[int],
    sizes: Sequence[int],
    cap: int,
    rng: random.Random,
    budget: int,
    noise: float = 0.0,
) -> list[int] | None:
    """Offsets of a plan with arena at most ``cap``, or None if none is found in ``budget`` moves.

    Args:
        first, last: half-open lifetimes ``[first, last)`` per tensor.
        sizes: aligned sizes per tensor.
        cap: the arena size to stay under.
        rng: source of the tie-breaking noise.
        budget: how many moves (placements and give-ups) to try before giving up.
        noise: 0 tries the widest tensors first; larger values shuffle the preference more.
    """
    steps = max(last, default=0)
    waste = cap * steps - sum(s * (l - f) for f, l, s in zip(first, last, sizes, strict=True))
    if waste < 0 or any(s > cap for s in sizes):
        return None
    starts = _starts_by_step(first, last, sizes, steps, rng, noise)
    height = [0] * steps
    offsets = [0 if s == 0 else -1 for s in sizes]
    todo = sum(1 for s in sizes if s > 0)
    # Frame: (a, end of the range a move covers, low, moves, next move, applied (end, tensor)).
    stack: list[list] = []
    moves_made = 0
    while todo > 0:
        if not stack or stack[-1][5] is not None:
            stack.append(_open_frame(height, starts, offsets, last, sizes, cap, waste))
        frame = stack[-1]
        a, b, low, moves, k, _ = frame
        if k == len(moves) or moves_made >= budget:
            stack.pop()  # every move from here failed: undo the move that led here
            if not stack or moves_made >= budget:
                return None
            waste, todo = _undo(stack[-1], height, offsets, waste, todo)
            continue
        frame[4] = k + 1
        moves_made += 1
        i = moves[k]
        if i < 0:  # give the stretch [a, c) up: raise it to its lower wall
            new = _raise_to(height, a, _stretch_end(height, a), cap)
            waste -= (new - low) * (b - a)
            height[a:b] = [new] * (b - a)
            frame[5] = (b, -1)
        else:
            offsets[i] = low
            height[a : last[i]] = [low + sizes[i]] * (last[i] - a)
            todo -= 1
            frame[5] = (last[i], i)
    return offsets


def _starts_by_step(first, last, sizes, steps, rng, noise) -> list[list[int]]:
    """Non-empty tensors grouped by start step, preferred ones first (wide, then large)."""
    starts: list[list[int]] = [[] for _ in range(steps)]
    for i in range(len(sizes)):
        if sizes[i] > 0:
            starts[first[i]].append(i)
    jitter = [1.0 + noise * rng.random() for _ in sizes]
    for bucket in starts:
        bucket.sort(key=lambda i: (-(last[i] - first[i]) * jitter[i], -sizes[i], i))
    return starts


def _open_frame(height, starts, offsets, last, sizes, cap, waste) -> list:
    """The lowest, leftmost stretch and the moves that may cover it, best first."""
    low = min(height)
    a = height.index(low)
    b = _stretch_end(height, a)
    moves, seen = [], []
    for i in starts[a]:
        shape = (last[i], sizes[i])  # an identical tensor would fail the same way: skip it
        if offsets[i] < 0 and last[i] <= b and low + sizes[i] <= cap and shape not in seen:
            seen.append(shape)
            moves.append(i)
    # Giving up only reaches the next step where some tensor could start at this level.
    c = a + 1
    while c < b and not any(offsets[i] < 0 for i in starts[c]):
        c += 1
    if (_raise_to(height, a, b, cap) - low) * (c - a) <= waste:
        moves.append(-1)
    return [a, c, low, moves, 0, None]


def _stretch_end(height: list[int], a: int) -> int:
    b = a
    while b < len(height) and height[b] == height[a]:
        b += 1
    return b


def _raise_to(height: list[int], a: int, b: int, cap: int) -> int:
    """The height a given-up stretch rises to: its lower neighbour, or the cap at both ends."""
    walls = [height[t] for t in (a - 1, b) if 0 <= t < len(height)]
    return min([*walls, cap])


def _undo(frame: list, height, offsets, waste: int, todo: int) -> tuple[int, int]:
    """Take back the move applied in ``frame``; return the waste budget and tensors to go."""
    a, b, low, _, _, (end, i) = frame
    if i < 0:
        waste += (height[a] - low) * (b - a)
    else:
        offsets[i] = -1
        todo += 1
    height[a:end] = [low] * (end - a)
    frame[5] = None
    return waste, todo
