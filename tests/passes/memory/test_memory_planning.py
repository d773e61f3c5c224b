"""Tests of liveness, the planners, the lower bound, the validator, CSV I/O and the CLI."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsim.errors import PassError, PlanError, SerializationError
from chipsim.i18n import use_language
from chipsim.ir import GraphBuilder, f32
from chipsim.passes.memory import (
    PLANNERS,
    MemoryPlan,
    UsageRecord,
    align_up,
    first_fit,
    get_planner,
    greedy_by_size,
    liveness,
    lower_bound,
    naive,
    read_records_csv,
    search,
    validate_plan,
    write_plan_csv,
)
from chipsim.passes.memory.instances import mobilenet_v1_records, mobilenet_v2_records
from chipsim.testing.memory_instances import packed_instance
from chipsim.viz.memory_plan import draw_memory_plan

matplotlib.use("Agg")


def small_graph():
    b = GraphBuilder("golden")
    x = b.input((16, 16), f32, hint="x")  # 1024 B
    h = b.op("relu", x, hint="h")
    w = b.const(1.0)  # a weight: not in the activation arena
    y = b.op("mul", h, w, hint="y")
    z = b.op("add", y, x, hint="z")  # x stays live until here (a skip connection)
    s = b.op("sum", z, axes=(1,), hint="s")  # 64 B
    return b.build(s)


# -- liveness ------------------------------------------------------------------------------


def test_golden_liveness_and_greedy_offsets():
    g = small_graph()
    recs = liveness(g)
    assert [(r.id, r.size, r.first, r.last) for r in recs] == [
        ("x", 1024, 0, 4),
        ("h", 1024, 0, 3),
        ("y", 1024, 2, 4),
        ("z", 1024, 3, 5),
        ("s", 64, 4, 5),
    ]
    plan = validate_plan(greedy_by_size(recs))
    assert plan.offsets == {"x": 0, "h": 1024, "y": 2048, "z": 1024, "s": 0}
    assert plan.arena_size == 3072 == lower_bound(recs)


def test_liveness_constants_and_schedule():
    g = small_graph()
    with_consts = liveness(g, include_constants=True)
    assert [r.id for r in with_consts] == ["x", "h", "%2", "y", "z", "s"]
    assert with_consts[2] == UsageRecord("%2", 4, 1, 3)
    const, relu = g.nodes[1], g.nodes[0]
    swapped = liveness(g, [const, relu, *g.nodes[2:]])
    assert swapped[1] == UsageRecord("h", 1024, 1, 3)
    with pytest.raises(PassError, match="runs before"):
        liveness(g, [g.nodes[2], *g.nodes[:2], *g.nodes[3:]])
    with pytest.raises(PassError, match="misses node"):
        liveness(g, g.nodes[:-1])


def test_usage_record_rejects_bad_fields():
    with pytest.raises(PlanError, match="empty"):
        UsageRecord("a", 10, 3, 3)
    with pytest.raises(PlanError, match="size"):
        UsageRecord("a", -1, 0, 1)


# -- planners, bound, validator ------------------------------------------------------------


def test_get_planner_lists_names():
    assert get_planner("first-fit") is first_fit
    assert get_planner(naive) is naive
    with pytest.raises(PlanError, match="naive, first_fit, greedy_by_size, search"):
        get_planner("best")


@pytest.mark.parametrize("records", [mobilenet_v1_records(), mobilenet_v2_records()])
def test_greedy_reaches_lower_bound_on_mobilenets(records):
    plan = validate_plan(greedy_by_size(records))
    assert plan.arena_size == lower_bound(records)
    assert naive(records).arena_size > 3 * plan.arena_size


def test_mobilenet_shapes():
    v1, v2 = mobilenet_v1_records(), mobilenet_v2_records()
    assert v1[1] == UsageRecord("conv1", 112 * 112 * 32 * 4, 0, 2)
    assert len(v1) == 31 and v1[-1].size == 4000
    add = next(r for r in v2 if r.id == "b3_add")
    block_in = next(r for r in v2 if r.id == "b2_project")
    assert block_in.last == add.first + 1  # the residual input lives until the add
    assert lower_bound(v1) == 4_816_896 and lower_bound(v2) == 6_021_120


def test_packed_instances_are_fully_packed():
    for n in (100, 200):
        for seed in range(3):
            recs = packed_instance(n, seed)
            assert sum(r.size * r.length for r in recs) == n * 64 * 1024  # fully packed
            assert lower_bound(recs) == 64 * 1024


def test_validate_names_colliding_tensors():
    recs = (UsageRecord("relu2", 4096, 3, 6), UsageRecord("conv3", 8192, 5, 7))
    msg = (
        "tensors 'relu2' and 'conv3' overlap at bytes [4096, 8192) while both live at step 5: "
        "give one of them an offset clear of the other"
    )
    with pytest.raises(PlanError) as err:
        validate_plan(MemoryPlan(recs, {"relu2": 4096, "conv3": 0}))
    assert str(err.value) == msg
    # a learner who works in Chinese reads it in Chinese (a walk found it English)
    with use_language("zh_CN"):
        with pytest.raises(PlanError, match=r"^张量 'relu2' 和 'conv3' 在第 5 步都活跃"):
            validate_plan(MemoryPlan(recs, {"relu2": 4096, "conv3": 0}))
        with pytest.raises(PlanError, match=r"^张量 'x'：生命周期 \[3, 3\) 为空"):
            UsageRecord("x", 64, 3, 3)
    # Touching lifetimes [3, 6) and [6, 7) may share bytes.
    ok = (UsageRecord("a", 4096, 3, 6), UsageRecord("b", 4096, 6, 7))
    assert validate_plan(MemoryPlan(ok, {"a": 0, "b": 0})).arena_size == 4096


@pytest.mark.parametrize(
    ("offsets", "match"),
    [
        ({"a": 0}, "'b' has no offset"),
        ({"a": 0, "b": 128, "c": 0}, "unknown tensor 'c'"),
        ({"a": 0, "b": -64}, "negative"),
        ({"a": 0, "b": 100}, "not a multiple of the alignment 64"),
    ],
)
def test_validate_rejects_bad_offsets(offsets, match):
    recs = (UsageRecord("a", 64, 0, 2), UsageRecord("b", 64, 1, 3))
    with pytest.raises(PlanError, match=match):
        validate_plan(MemoryPlan(recs, offsets))


def test_validate_is_a_sweep_on_400_tensors():
    recs = packed_instance(400, seed=0)
    plan = validate_plan(search(recs, effort=10))
    assert plan.arena_size >= 64 * 1024


# -- property tests --------------------------------------------------------------------------

records_strategy = st.lists(
    st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(0, 3000)), max_size=25
).map(lambda rows: [UsageRecord(f"t{k}", s, f, f + d) for k, (f, d, s) in enumerate(rows)])


@settings(max_examples=60, deadline=None)
@given(records_strategy, st.sampled_from([1, 16, 64]))
def test_planner_properties(records, alignment):
    lb = lower_bound(records, alignment=alignment)
    arenas = {}
    for name, planner in PLANNERS.items():
        plan = validate_plan(planner(records, alignment=alignment))
        assert plan.arena_size >= lb
        arenas[name] = plan.arena_size
    assert arenas["search"] <= arenas["greedy_by_size"]
    assert arenas["naive"] == sum(align_up(r.size, alignment) for r in records)


# -- views, CSV, CLI -------------------------------------------------------------------------


def test_plan_views():
    plan = greedy_by_size(liveness(small_graph()))
    text = str(plan)
    assert text.splitlines()[0].endswith("ratio 1.000x")
    assert "<table>" in plan._repr_html_()
    ax = draw_memory_plan(plan)
    assert len(ax.patches) == 5


CSV = "id,lower,upper,size\na,0,2,100\nb,1,3,64\nc,2,4,100\n"


def test_csv_round_trip():
    recs = read_records_csv(CSV)
    out = write_plan_csv(greedy_by_size(recs))
    assert out == "id,lower,upper,size,offset\na,0,2,100,0\nb,1,3,64,128\nc,2,4,100,0\n"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("id,lower,size\na,0,1\n", "line 1: missing column"),
        ("id,lower,upper,size\na,0,x,1\n", "line 2: upper of 'a' must be a whole number, got 'x'"),
        ("id,lower,upper,size\na,0,1,1\nb,2,2,1\n", "line 3: .*upper 2 <= lower 2"),
        ("id,lower,upper,size\na,0,1,-5\n", "line 2: .*size must be >= 0"),
        ("id,lower,upper,size\na,0,1,5\na,1,2,5\n", "line 3: duplicate id 'a'"),
    ],
)
def test_csv_errors_name_the_line(text, match):
    with pytest.raises(SerializationError, match=match):
        read_records_csv(text)


def test_cli(tmp_path):
    src, dst = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text(CSV)
    cmd = [sys.executable, "-m", "chipsim.cli.plan_memory", str(src), "--strategy", "search"]
    done = subprocess.run([*cmd, "-o", str(dst)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "arena:       192 B" in done.stdout and "ratio:       1.000" in done.stdout
    assert dst.read_text().splitlines()[1] == "a,0,2,100,0"
    src.write_text("id,lower,upper,size\na,0,1,5\na,1,2,5\n")
    bad = subprocess.run(cmd, capture_output=True, text=True)
    assert bad.returncode == 2 and "line 3: duplicate id 'a'" in bad.stderr
    assert "Traceback" not in bad.stderr and bad.stdout == ""
