"""The anytime search planner: properties on random instances, proofs checked by brute force,
the time limit, determinism. No test relies on how a generator builds its cases."""

from __future__ import annotations

import importlib
import itertools
import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.errors import PlanError
from chipsim.passes.memory import (
    UsageRecord,
    greedy_by_size,
    lower_bound,
    plan_memory,
    search,
    validate_plan,
)
from chipsim.passes.memory.search_canonical import FOUND, INFEASIBLE, fit_under
from chipsim.passes.memory.search_problem import Effort, Instance
from chipsim.testing.memory_instances import (
    heavy_tailed_records,
    long_lived_records,
    random_records,
    tight_records,
)

# The module, not the function the package exports under the same name.
search_module = importlib.import_module("chipsim.passes.memory.search")
run_search = search_module.run_search

FAMILIES = [heavy_tailed_records, long_lived_records, tight_records, random_records]

# Random instances straight from Hypothesis: no generator's structure to lean on.
records_strategy = st.lists(
    st.tuples(st.integers(0, 30), st.integers(1, 12), st.integers(1, 5000)),
    min_size=1,
    max_size=40,
).map(lambda rows: [UsageRecord(f"t{k}", s, f, f + d) for k, (f, d, s) in enumerate(rows)])


@settings(max_examples=60, deadline=None)
@given(records_strategy, st.sampled_from([1, 64]), st.integers(0, 3))
def test_search_is_valid_and_never_worse_than_greedy(records, alignment, seed):
    result = run_search(records, alignment=alignment, seed=seed, time_limit=30, effort=3000)
    plan = validate_plan(result.plan)
    greedy = greedy_by_size(records, alignment=alignment).arena_size
    assert lower_bound(records, alignment=alignment) <= result.bound <= plan.arena_size <= greedy
    arenas = [a for _, a, _ in result.history]
    bounds = [b for _, _, b in result.history]
    assert arenas == sorted(arenas, reverse=True) and bounds == sorted(bounds)
    assert arenas[-1] == plan.arena_size and bounds[-1] == result.bound


@settings(max_examples=15, deadline=None)
@given(records_strategy, st.integers(0, 5))
def test_same_seed_and_effort_same_plan(records, seed):
    first = search(records, seed=seed, time_limit=60, effort=2000)
    again = search(records, seed=seed, time_limit=60, effort=2000)
    assert first.offsets == again.offsets


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__)
def test_families_deterministic_and_more_effort_never_hurts(family):
    recs = family(150, seed=11)
    arenas = []
    for effort in (0, 500, 5000):
        plans = [search(recs, seed=1, time_limit=60, effort=effort) for _ in range(2)]
        assert plans[0].offsets == plans[1].offsets
        arenas.append(validate_plan(plans[0]).arena_size)
    assert arenas == sorted(arenas, reverse=True)
    assert arenas[0] == greedy_by_size(recs).arena_size  # no effort: greedy's plan


def _brute_force_optimum(records: list[UsageRecord], alignment: int) -> int:
    """The smallest arena over first-fit placements in every order.

    Placing the tensors of an optimal plan in order of their offsets, each at the lowest
    offset where it fits, never puts one higher than in that plan, so this is the optimum.
    """
    inst = Instance(records, alignment)
    budget = Effort(1e9)
    return min(
        inst.arena(inst.place(order, False, budget))
        for order in itertools.permutations(range(len(records)))
    )


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(1, 4), st.sampled_from([64, 128, 192, 320])),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 2),
)
def test_canonical_search_finds_the_optimum_and_proves_nothing_smaller(rows, which):
    recs = [UsageRecord(f"t{k}", s, f, f + d) for k, (f, d, s) in enumerate(rows)]
    optimum = _brute_force_optimum(recs, 64)
    inst = Instance(recs, 64)
    rank = search_module._ranks(inst)[which]
    status, offsets = fit_under(inst, optimum, rank, Effort(60), 10**6)
    assert status == FOUND and inst.arena(offsets) <= optimum
    assert fit_under(inst, optimum - 64, rank, Effort(60), 10**6) == (INFEASIBLE, None)
    result = run_search(recs, time_limit=60)
    assert result.plan.arena_size == optimum and result.stopped_by == "optimal"


def test_time_limit_is_kept_on_1000_buffers():
    # Lifetimes and sizes drawn here, unlike any family: nothing to recognise.
    rng = random.Random(7)
    recs = []
    for k in range(1000):
        first = rng.randrange(400)
        recs.append(
            UsageRecord(f"x{k}", rng.randint(1, 1 << 20), first, first + rng.randint(1, 60))
        )
    start = time.perf_counter()
    result = run_search(recs, time_limit=1.0)
    elapsed = time.perf_counter() - start
    assert result.stopped_by in ("time limit", "optimal")
    assert elapsed < 1.0 + 3.0  # generous: the greedy start and a shared, busy machine
    validate_plan(result.plan)
    assert result.plan.arena_size <= greedy_by_size(recs).arena_size


def test_huge_step_numbers_cost_nothing_extra():
    # Nanosecond timestamps: only the order of lifetime ends matters.
    ns = 10**12
    recs = [UsageRecord("a", 128, 3 * ns, 4 * ns), UsageRecord("b", 128, ns, 4 * ns),
            UsageRecord("c", 128, 3 * ns, 4 * ns), UsageRecord("d", 128, 2 * ns, 3 * ns),
            UsageRecord("e", 192, 0, 2 * ns)]  # fmt: skip
    assert lower_bound(recs) == 384
    result = run_search(recs, time_limit=10)
    assert result.plan.arena_size == 384 and result.stopped_by == "optimal"
    assert result.seconds < 2


def test_registry_passes_the_time_limit_through():
    recs = tight_records(200, seed=3)
    plan = plan_memory(recs, "search", time_limit=0.5, effort=100)
    assert plan.strategy == "search"
    assert plan.offsets == search(recs, time_limit=0.5, effort=100).offsets


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"time_limit": 0}, "time_limit must be a positive number"),
        ({"time_limit": float("nan")}, "time_limit must be a positive number"),
        ({"effort": -1}, "effort must be None or a number of work units"),
        ({"alignment": 0}, "alignment must be a positive int"),
    ],
)
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(PlanError, match=match):
        search([UsageRecord("a", 64, 0, 1)], **kwargs)


def test_empty_and_zero_size_records():
    assert search([]).arena_size == 0
    recs = [UsageRecord("z", 0, 0, 3), UsageRecord("a", 64, 0, 2), UsageRecord("b", 64, 1, 3)]
    plan = validate_plan(search(recs, time_limit=1))
    assert plan.arena_size == 128
