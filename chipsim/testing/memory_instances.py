"""Generators of memory-planning instances (usage records), each from a seed.

They feed tests, benchmarks and exercises. No planner may rely on how any of them builds its
cases: the search planner is measured on these *and* on instances nobody here made (a public
benchmark set and the activations of published models; see ``benchmarks/planners.py``).

* :func:`packed_instance`: a ``height`` x ``steps`` rectangle cut into buffers by random
  guillotine cuts. Every step is exactly full, so the optimum equals the lower bound.
* :func:`random_records`: uniform random lifetimes and sizes (the exercises' instances).
* :func:`heavy_tailed_records`: random lifetimes, sizes from a Pareto law: most buffers small,
  a few huge ones, as in real networks (a stem activation can be 100x a late one).
* :func:`long_lived_records`: a few buffers live for most of the schedule (residual streams,
  KV caches, buffers kept for the backward pass) beside many short-lived ones.
* :func:`tight_records`: a long schedule of short lifetimes (each buffer lives a few steps),
  as in a layer-by-layer network with skip connections, so the live set changes every step.

Example:
    >>> from chipsim.passes.memory.bounds import lower_bound
    >>> recs = packed_instance(100, seed=0)
    >>> len(recs), lower_bound(recs) == 64 * 1024
    (100, True)
    >>> [len(f(200, seed=1)) for f in (heavy_tailed_records, long_lived_records, tight_records)]
    [200, 200, 200]
"""

from __future__ import annotations

import random

from chipsim.errors import PlanError
from chipsim.passes.memory.liveness import UsageRecord


def packed_instance(
    n: int, seed: int = 0, *, steps: int | None = None, height: int | None = None, quantum: int = 64
) -> list[UsageRecord]:
    """``n`` buffers that tile a ``height`` x ``steps`` rectangle exactly (optimum = ``height``).

    Start from the whole rectangle; repeatedly take a piece (larger ones more likely) and cut it
    in two, across time or across addresses, at a random point. Address cuts fall on multiples
    of ``quantum`` bytes so that, with alignment ``quantum``, nothing is rounded up.

    Args:
        n: number of buffers (pieces).
        seed: seed of the random cuts.
        steps: time span (default ``n``).
        height: arena height in bytes (default ``quantum * 1024``).
        quantum: the address granularity of cuts, in bytes.
    """
    steps = n if steps is None else steps
    height = quantum * 1024 if height is None else height
    if height % quantum or n < 1 or steps < 1:
        raise PlanError(f"packed_instance needs n, steps >= 1 and height a multiple of {quantum}")
    rng = random.Random(seed)
    pieces = [(0, steps, 0, height // quantum)]  # (t0, t1, a0, a1), addresses in quanta
    while len(pieces) < n:
        weights = [(t1 - t0) * (a1 - a0) for t0, t1, a0, a1 in pieces]
        k = rng.choices(range(len(pieces)), weights=weights)[0]
        t0, t1, a0, a1 = pieces[k]
        cut_time = rng.random() < (t1 - t0) / ((t1 - t0) + (a1 - a0) * steps / (height // quantum))
        if cut_time and t1 - t0 >= 2:
            m = rng.randrange(t0 + 1, t1)
            pieces[k : k + 1] = [(t0, m, a0, a1), (m, t1, a0, a1)]
        elif a1 - a0 >= 2:
            m = rng.randrange(a0 + 1, a1)
            pieces[k : k + 1] = [(t0, t1, a0, m), (t0, t1, m, a1)]
        elif t1 - t0 >= 2:
            m = rng.randrange(t0 + 1, t1)
            pieces[k : k + 1] = [(t0, m, a0, a1), (m, t1, a0, a1)]
        elif not any(p[1] - p[0] >= 2 or p[3] - p[2] >= 2 for p in pieces):
            raise PlanError(f"cannot cut a {steps} x {height} B rectangle into {n} buffers")
    # Shuffle so that record order gives no hint of the packing.
    rng.shuffle(pieces)
    return [
        UsageRecord(f"b{k}", (a1 - a0) * quantum, t0, t1)
        for k, (t0, t1, a0, a1) in enumerate(pieces)
    ]


def random_records(
    n: int, seed: int = 0, *, steps: int = 50, max_size: int = 5000
) -> list[UsageRecord]:
    """``n`` records with random lifetimes in ``[0, steps)`` and sizes in ``[1, max_size]``."""
    rng = random.Random(seed)
    records = []
    for k in range(n):
        first = rng.randrange(steps)
        last = rng.randrange(first + 1, steps + 1)
        records.append(UsageRecord(f"t{k}", rng.randint(1, max_size), first, last))
    return records


def heavy_tailed_records(
    n: int, seed: int = 0, *, steps: int | None = None, alpha: float = 1.1, base: int = 4096
) -> list[UsageRecord]:
    """``n`` buffers with Pareto(``alpha``) sizes and lifetimes of geometric-ish lengths.

    Sizes are ``base * Pareto(alpha)`` bytes, capped at 1000 x ``base`` (``alpha`` near 1 gives
    a very heavy tail). Lifetimes start uniformly in ``[0, steps)`` (default ``n // 2``) and
    last ``1 + Exp`` steps with mean ``steps / 10``.
    """
    steps = max(2, n // 2) if steps is None else steps
    rng = random.Random(seed)
    records = []
    for k in range(n):
        size = min(int(base * rng.paretovariate(alpha)), 1000 * base)
        first = rng.randrange(steps)
        length = 1 + int(rng.expovariate(10 / steps))
        records.append(UsageRecord(f"h{k}", size, first, min(first + length, steps)))
    return records


def long_lived_records(
    n: int, seed: int = 0, *, steps: int | None = None, share: float = 0.1
) -> list[UsageRecord]:
    """``n`` buffers, a ``share`` of them live for most of the schedule, the rest briefly.

    Long-lived buffers start in the first fifth of the schedule and end in the last fifth, with
    sizes from 16 KiB to 1 MiB; short ones live 1-4 steps, 4 KiB to 256 KiB (log-uniform).
    """
    steps = max(10, n // 2) if steps is None else steps
    rng = random.Random(seed)
    records = []
    for k in range(n):
        if rng.random() < share:
            first = rng.randrange(steps // 5)
            last = rng.randrange(4 * steps // 5, steps) + 1
            size = _log_uniform(rng, 16 << 10, 1 << 20)
        else:
            first = rng.randrange(steps)
            last = min(first + rng.randint(1, 4), steps)
            size = _log_uniform(rng, 4 << 10, 256 << 10)
        records.append(UsageRecord(f"l{k}", size, first, max(last, first + 1)))
    return records


def tight_records(n: int, seed: int = 0) -> list[UsageRecord]:
    """``n`` buffers of a layer-by-layer schedule: step ``t`` writes one buffer, read by the
    next one to three steps, and now and then a skip connection keeps one alive longer.

    Sizes follow a network's shape: a stage of similar sizes, then a jump (down or up by 2-4x,
    like a stride or an expansion), with some noise within a stage.
    """
    rng = random.Random(seed)
    records = []
    stage_size = 1 << 20
    for t in range(n):
        if rng.random() < 0.08:
            stage_size = max(4096, int(stage_size * rng.choice((0.25, 0.5, 2.0, 3.0))))
            stage_size = min(stage_size, 8 << 20)
        size = int(stage_size * rng.uniform(0.5, 1.5))
        life = rng.randint(1, 3) if rng.random() > 0.1 else rng.randint(4, 12)
        records.append(UsageRecord(f"a{t}", size, t, t + 1 + life))
    return records


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return int(low * (high / low) ** rng.random())
