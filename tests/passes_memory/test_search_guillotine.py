"""Guillotine recovery (search_guillotine, search_bands): exact on guillotine tilings."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.passes.memory import UsageRecord, greedy_by_size, lower_bound, search, validate_plan
from chipsim.passes.memory.instances import packed_instance
from chipsim.passes.memory.plan import make_plan
from chipsim.passes.memory.search_bands import sweep_bands
from chipsim.passes.memory.search_guillotine import constant_profile, pack_guillotine


def _arrays(recs):
    return [r.first for r in recs], [r.last for r in recs], [r.size for r in recs]


def _pinwheel(n: int, seed: int) -> list[UsageRecord]:
    """A tiling that no guillotine cut splits: four pieces turn around a centre piece."""
    rng = random.Random(seed)
    pieces = [(0, 8, 0, 4), (8, 12, 0, 8), (4, 12, 8, 12), (0, 4, 4, 12), (4, 8, 4, 8)]
    while len(pieces) < n:  # cut the pieces further, as packed_instance does
        k = rng.randrange(len(pieces))
        t0, t1, a0, a1 = pieces[k]
        if t1 - t0 >= 2 and rng.random() < 0.5:
            m = rng.randrange(t0 + 1, t1)
            pieces[k : k + 1] = [(t0, m, a0, a1), (m, t1, a0, a1)]
        elif a1 - a0 >= 2:
            m = rng.randrange(a0 + 1, a1)
            pieces[k : k + 1] = [(t0, t1, a0, m), (t0, t1, m, a1)]
    return [
        UsageRecord(f"p{k}", (a1 - a0) * 64, t0, t1) for k, (t0, t1, a0, a1) in enumerate(pieces)
    ]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 64))
def test_guillotine_tilings_are_solved_exactly(n, seed, steps, quanta):
    n = min(n, steps * quanta)  # a piece cannot be cut below one step x one quantum
    recs = packed_instance(n, seed, steps=steps, height=64 * quanta)
    offsets = pack_guillotine(*_arrays(recs))
    assert offsets is not None
    plan = validate_plan(make_plan(recs, offsets, 64, "guillotine"))
    assert plan.arena_size == lower_bound(recs) == 64 * quanta


def test_packed_400_reaches_the_optimum():
    recs = packed_instance(400, seed=1)
    plan = validate_plan(search(recs))
    assert plan.arena_size == 64 * 1024


def test_pinwheel_is_not_guillotine():
    recs = _pinwheel(5, seed=0)
    assert constant_profile(*_arrays(recs), range(5)) == 12 * 64
    assert pack_guillotine(*_arrays(recs)) is None  # no straight cut splits it
    plan = validate_plan(search(recs))
    assert lower_bound(recs) <= plan.arena_size <= greedy_by_size(recs).arena_size


def test_cut_pinwheel_stays_valid():
    # Cut finer, a pinwheel may be rearranged into a guillotine tiling; either way, valid.
    recs = _pinwheel(40, seed=3)
    offsets = pack_guillotine(*_arrays(recs))
    if offsets is not None:
        assert validate_plan(make_plan(recs, offsets, 64, "g")).arena_size == 12 * 64
    plan = validate_plan(search(recs))
    assert lower_bound(recs) <= plan.arena_size <= greedy_by_size(recs).arena_size


def test_uneven_profile_is_left_to_the_other_methods():
    first, last, sizes = [0, 1], [2, 3], [64, 64]
    assert constant_profile(first, last, sizes, [0, 1]) is None
    assert pack_guillotine(first, last, sizes) is None


def test_bands_keep_live_bytes_constant():
    recs = packed_instance(40, seed=2)
    first, last, sizes = _arrays(recs)
    items = list(range(len(recs)))
    t0, t1 = 0, max(last)
    anchor = next(i for i in items if first[i] == t0)
    bands = [b for b in sweep_bands(first, last, sizes, items, t0, t1, anchor, lambda: None) if b]
    assert bands  # a guillotine tiling with no time cut at the top has a band
    for band in bands:
        assert anchor in band and len(band) < len(items)
        assert constant_profile(first, last, sizes, band) is not None
