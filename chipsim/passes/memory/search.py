"""A search planner: try many placements, keep the smallest arena.

Greedy by size is one order and one placement rule. Search tries more of both and keeps the
best plan it finds, starting from greedy by size, so it is never worse than it:

0. *Guillotine recovery*: when the live bytes are the same at every step, a plan without
   holes may exist; :mod:`.search_guillotine` looks for one by recovering the cuts (across
   time or across addresses) that split the picture into strips. A plan it finds reaches the
   lower bound, so it is optimal and the search stops there.
1. *Orderings*: largest first, longest-lived first, largest area (size x lifetime) first,
   earliest first, and a few seeded random orders, each placed with best fit and lowest fit.
2. *Skyline best fit*: fill the lowest free stretch of the address x time picture with the
   tensor that fits it best (after Burke, Kendall & Whitwell's best-fit heuristic for strip
   packing), so that tight, fully packed instances come out dense.
3. *Exact fill*: a short depth-first search for a plan with no hole at all, which succeeds
   on small tight instances and proves them optimal (arena == lower bound).
4. *Local search*: move one of the tensors that touch the top of the arena earlier in the
   best order, re-place, and keep the move if the arena did not grow.
5. *Squeeze*: ask the skyline depth-first search (:mod:`.search_skyline`) for a plan under a
   cap 3% below the best arena so far, again and again until it fails.

Everything random comes from ``random.Random(seed)``: the same records and seed give the same
plan on every machine. The effort is a number of moves, never a clock.

Example:
    >>> from chipsim.passes.memory.instances import packed_instance
    >>> recs = packed_instance(60, seed=1)
    >>> from chipsim.passes.memory.bounds import lower_bound
    >>> search(recs).arena_size <= greedy_by_size(recs).arena_size
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from chipsim.passes.memory.liveness import (
    DEFAULT_ALIGNMENT,
    UsageRecord,
    align_up,
    check_alignment,
)
from chipsim.passes.memory.plan import MemoryPlan, make_plan
from chipsim.passes.memory.planners import _best_offset, greedy_by_size, overlap_lists
from chipsim.passes.memory.search_guillotine import pack_guillotine
from chipsim.passes.memory.search_skyline import fill_skyline


def search(
    records: Sequence[UsageRecord],
    *,
    alignment: int = DEFAULT_ALIGNMENT,
    seed: int = 0,
    moves: int | None = None,
) -> MemoryPlan:
    """The best of many greedy placements plus a local search; never worse than greedy by size.

    Args:
        records: the tensors to place.
        alignment: offsets are multiples of it and sizes are rounded up to it.
        seed: seeds the random orders and moves (same seed, same plan).
        moves: local-search moves to try (default: 40 000 // n, at least 50).
    """
    check_alignment(alignment)
    records = list(records)
    greedy = greedy_by_size(records, alignment=alignment)
    n = len(records)
    if n <= 1:
        return make_plan(records, [greedy.offsets[r.id] for r in records], alignment, "search")
    rng = random.Random(seed)
    ctx = _Context(records, [align_up(r.size, alignment) for r in records])
    best_offsets = [greedy.offsets[r.id] for r in records]
    best_arena = greedy.arena_size
    # The same order greedy_by_size uses, so local search can start from it.
    best_order = sorted(range(n), key=lambda i: (-records[i].size, records[i].first, i))

    def consider(offsets: list[int], order: list[int]) -> None:
        nonlocal best_offsets, best_arena, best_order
        arena = ctx.arena(offsets)
        if arena < best_arena:
            best_offsets, best_arena, best_order = offsets, arena, order

    lower = ctx.lower_bound()
    exact = pack_guillotine(ctx.first, ctx.last, ctx.sizes)
    if exact is not None:
        consider(exact, sorted(range(n), key=lambda i: (exact[i], i)))
        if best_arena == lower:  # optimal: nothing left to search for
            return make_plan(records, best_offsets, alignment, "search")
    for order in _orderings(ctx, rng):
        for best_fit in (True, False):
            consider(ctx.place(order, best_fit), order)
    for rule in range(4):
        offsets, order = _skyline(ctx, rule, rng)
        consider(offsets, order)
        if best_arena > lower:
            consider(ctx.place(order, False), order)

    # Tight instances: look for a plan without holes, exactly at the lower bound.
    for attempt in range(3 if best_arena > lower and n <= 500 else 0):
        exact = _fill_exactly(ctx, lower, rng, 2000, shuffle=attempt > 0)
        if exact is not None:
            consider(exact, sorted(range(n), key=lambda i: (exact[i], i)))
            break

    budget = moves if moves is not None else max(50, 40_000 // n)
    if best_arena > lower:
        best_offsets, best_arena = _local_search(ctx, best_order, best_offsets, budget, rng)
    best_offsets = _squeeze(ctx, best_offsets, best_arena, alignment, rng)
    return make_plan(records, best_offsets, alignment, "search")


def _squeeze(
    ctx: _Context, offsets: list[int], arena: int, alignment: int, rng: random.Random
) -> list[int]:
    """Ask the skyline search for plans under ever lower caps, 1% at a time; keep the last.

    Each cap gets a few short randomised restarts (a fixed number of moves, so deterministic).
    """
    lower = ctx.lower_bound()
    while arena > lower:
        cap = max(lower, arena * 99 // 100 // alignment * alignment)
        found = None
        for attempt in range(3):
            noise = 0.0 if attempt == 0 else 1.0
            found = fill_skyline(ctx.first, ctx.last, ctx.sizes, cap, rng, 1500, noise)
            if found is not None:
                break
        if found is None:
            break
        offsets, arena = found, ctx.arena(found)
    return offsets


class _Context:
    """The records in the arrays the placement loops want (aligned sizes, neighbour lists)."""

    def __init__(self, records: list[UsageRecord], sizes: list[int]) -> None:
        self.records = records
        self.sizes = sizes
        self.first = [r.first for r in records]
        self.last = [r.last for r in records]
        self.neighbours = overlap_lists(records)

    def place(self, order: Sequence[int], best_fit: bool) -> list[int]:
        offsets = [-1] * len(self.records)
        for i in order:
            offsets[i] = _best_offset(i, self.neighbours[i], offsets, self.sizes, best_fit)
        return offsets

    def arena(self, offsets: Sequence[int]) -> int:
        return max((o + s for o, s in zip(offsets, self.sizes, strict=True)), default=0)

    def lower_bound(self) -> int:
        steps = max(self.last)
        delta = [0] * (steps + 1)
        for f, l, s in zip(self.first, self.last, self.sizes, strict=True):
            delta[f] += s
            delta[l] -= s
        peak = running = 0
        for d in delta:
            running += d
            peak = max(peak, running)
        return peak


def _orderings(ctx: _Context, rng: random.Random) -> list[list[int]]:
    idx = range(len(ctx.records))
    size, first, last = ctx.sizes, ctx.first, ctx.last
    keys: list[Callable[[int], tuple]] = [
        lambda i: (-size[i], first[i], i),
        lambda i: (-(last[i] - first[i]), -size[i], i),
        lambda i: (-size[i] * (last[i] - first[i]), i),
        lambda i: (first[i], -size[i], i),
        lambda i: (-size[i], -(last[i] - first[i]), i),
    ]
    orders = [sorted(idx, key=k) for k in keys]
    for _ in range(3):
        order = list(idx)
        rng.shuffle(order)
        orders.append(order)
    return orders


def _skyline(ctx: _Context, rule: int, rng: random.Random) -> tuple[list[int], list[int]]:
    """Skyline best fit: repeatedly fill the lowest (leftmost) flat stretch of the picture.

    ``height[t]`` is the top of the tensors placed so far at step ``t``. A tensor whose lifetime
    lies inside the lowest flat stretch can sit right on it. If none fits, the stretch is raised
    to its lower neighbour (that space is given up) and we look again.
    """
    n, steps = len(ctx.records), max(ctx.last)
    height = [0] * steps
    starts: list[list[int]] = [[] for _ in range(steps)]
    for i in sorted(range(n), key=lambda k: (ctx.first[k], k)):
        starts[ctx.first[i]].append(i)
    offsets, order = [-1] * n, []
    noise = [rng.random() for _ in range(n)]
    while len(order) < n:
        low = min(height)
        a = height.index(low)
        b = a
        while b < steps and height[b] == low:
            b += 1
        fits = [i for t in range(a, b) for i in starts[t] if ctx.last[i] <= b]
        if not fits:
            left = height[a - 1] if a > 0 else None
            right = height[b] if b < steps else None
            new = min(h for h in (left, right) if h is not None)
            height[a:b] = [new] * (b - a)
            continue
        i = max(fits, key=lambda k: _skyline_key(ctx, k, a, b, rule, noise))
        starts[ctx.first[i]].remove(i)
        offsets[i] = low
        order.append(i)
        height[ctx.first[i] : ctx.last[i]] = [low + ctx.sizes[i]] * (ctx.last[i] - ctx.first[i])
    return offsets, order


def _skyline_key(ctx: _Context, i: int, a: int, b: int, rule: int, noise: list[float]) -> tuple:
    width = ctx.last[i] - ctx.first[i]
    touches = (ctx.first[i] == a) + (ctx.last[i] == b)  # against a wall: leaves no sliver
    if rule == 0:
        return (width, ctx.sizes[i], touches, -i)
    if rule == 1:
        return (touches, width, ctx.sizes[i], -i)
    if rule == 2:
        return (ctx.sizes[i] * width, touches, -i)
    return (touches, width, noise[i])


def _local_search(
    ctx: _Context,
    order: list[int],
    offsets: list[int],
    budget: int,
    rng: random.Random,
) -> tuple[list[int], int]:
    """Move tensors on top of the arena earlier in the order; keep moves that do not hurt.

    Placing in order is a prefix computation, so a move to position ``p`` only re-places the
    tensors from ``p`` on.
    """
    n = len(order)
    lower = ctx.lower_bound()
    arena = ctx.arena(offsets)
    best_fit = rng.random() < 0.5
    for _ in range(budget):
        if arena <= lower:
            break
        top = [i for i in range(n) if offsets[i] + ctx.sizes[i] == arena]
        victim = rng.choice(top)
        pos = order.index(victim)
        if pos == 0:
            a, b = rng.randrange(n), rng.randrange(n)
            if a == b:
                continue
            new_order = order[:]
            new_order[a], new_order[b] = new_order[b], new_order[a]
            start = min(a, b)
        else:
            start = rng.randrange(pos)
            new_order = order[:pos] + order[pos + 1 :]
            new_order.insert(start, victim)
        new_offsets = offsets[:]
        for i in new_order[start:]:
            new_offsets[i] = -1
        for i in new_order[start:]:
            new_offsets[i] = _best_offset(i, ctx.neighbours[i], new_offsets, ctx.sizes, best_fit)
        new_arena = ctx.arena(new_offsets)
        if new_arena <= arena:
            order, offsets, arena = new_order, new_offsets, new_arena
    return offsets, arena


def _fill_exactly(
    ctx: _Context, cap: int, rng: random.Random, budget: int, shuffle: bool
) -> list[int] | None:
    """Depth-first search for a plan with arena ``cap`` that leaves no hole below ``cap``.

    Look at the lowest, leftmost free point ``(a, low)`` of the skyline. In a plan without holes
    some tensor must cover it, and since the step before ``a`` is already filled at that height,
    that tensor starts exactly at step ``a`` and ends by the end ``b`` of the flat stretch. So
    only tensors with ``first == a`` and ``last <= b`` are tried there, widest first. After each
    placement every other stretch with a higher step on its left must still have such a tensor
    (forward check). Gives up (returns None) after ``budget`` placements.
    """
    n, steps = len(ctx.records), max(ctx.last)
    first, last, sizes = ctx.first, ctx.last, ctx.sizes
    height = [0] * steps
    starts: list[list[int]] = [[] for _ in range(steps)]
    for i in range(n):
        if sizes[i] > 0:
            starts[first[i]].append(i)
    noise = [rng.random() if shuffle else 0.0 for _ in range(n)]
    for bucket in starts:
        bucket.sort(key=lambda k: (-last[k], -sizes[k], noise[k], k))
    placed = [False] * n
    offsets = [0 if sizes[i] == 0 else -1 for i in range(n)]
    tries = 0

    def coverable() -> bool:
        t = 0
        while t < steps:
            h, e = height[t], t
            while e < steps and height[e] == h:
                e += 1
            if h < cap and (t == 0 or height[t - 1] > h):
                limit = e if e == steps or height[e] > h else steps
                if not any(
                    not placed[i] and last[i] <= limit and h + sizes[i] <= cap for i in starts[t]
                ):
                    return False
            t = e
        return True

    def dfs(remaining: int) -> bool:
        nonlocal tries
        if remaining == 0:
            return True
        low = min(height)
        a = height.index(low)
        b = a
        while b < steps and height[b] == low:
            b += 1
        tried: set[tuple[int, int]] = set()
        for i in starts[a]:
            if placed[i] or last[i] > b or low + sizes[i] > cap or (last[i], sizes[i]) in tried:
                continue
            tried.add((last[i], sizes[i]))  # an identical tensor would fail the same way
            tries += 1
            if tries > budget:
                return False
            placed[i], offsets[i] = True, low
            height[a : last[i]] = [low + sizes[i]] * (last[i] - a)
            if coverable() and dfs(remaining - 1):
                return True
            placed[i] = False
            height[a : last[i]] = [low] * (last[i] - a)
        return False

    todo = sum(1 for s in sizes if s > 0)
    return offsets if dfs(todo) and tries <= budget else None
