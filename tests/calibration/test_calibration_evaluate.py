"""Simulating measured rows: the protocol's invariants and the error arithmetic."""

import math

import pytest

import chipsim
from chipsim.calibration import Evaluation, Measurement, Result, Summary, evaluate, simulate_us

from .columns import ROW_COLUMNS


def row(op, *shapes, dtype="f32", time_us=1.0, which="heldout"):
    return Measurement(op, f"t-{op}", tuple(shapes), dtype, time_us, set=which)


def test_a_tiny_op_costs_its_launch_a_huge_one_its_bytes():
    gpu = chipsim.chip("datacenter-gpu")
    la = gpu.launch  # the host's dispatch, the launch's latency to the GPU, the sync
    launch_us = (la.eager_cycles + la.device_cycles + la.sync_cycles) / gpu.clock_hz * 1e6
    tiny = simulate_us(row("gelu", (1024,), dtype="f16"), gpu)
    assert launch_us <= tiny < 2 * launch_us
    n = 2**28
    big = simulate_us(row("gelu", (n,), dtype="f16"), gpu)
    assert big >= 2 * 2 * n / gpu.dram_bandwidth * 1e6  # never faster than reading + writing


def test_same_row_same_time_and_longer_rows_take_longer():
    r = row("softmax", (4096, 1024), dtype="f16")
    assert simulate_us(r, "datacenter-gpu") == simulate_us(r, "datacenter-gpu")
    times = [
        simulate_us(row("softmax", (4096, n), dtype="f16"), "datacenter-gpu")
        for n in (1024, 4096, 16384)
    ]
    assert times == sorted(times) and times[0] < times[-1]


def test_synchronous_calls_cannot_hide_launches_behind_compute():
    # a GPU queues the next launch while a kernel runs; numpy on a CPU cannot
    chain = row("chain", (2**20,))
    asynchronous = simulate_us(chain, "datacenter-gpu")
    synchronous = simulate_us(chain, "datacenter-gpu", synchronous=True)
    assert synchronous > asynchronous


def test_summary_arithmetic():
    results = [Result(row("gelu", (4,), time_us=m), s) for m, s in ((10, 5), (10, 20), (4, 4))]
    sm = Summary.of(results)
    assert sm.rows == 3
    assert sm.mape == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert sm.geomean == pytest.approx(math.exp((math.log(0.5) + math.log(2) + 0) / 3))
    assert sm.worst == pytest.approx(1.0)
    assert math.isnan(Summary.of([]).mape)


def test_target_needs_low_mape_and_every_class_in_band():
    def ev(pairs):
        return Evaluation("x", tuple(Result(row(op, (4,), time_us=m), s) for op, m, s in pairs))

    assert ev([("gelu", 10, 11), ("matmul", 10, 9)]).meets_target()
    # MAPE fine overall, but one class's geometric mean is outside [0.85, 1.15]
    many = [("gelu", 10, 10)] * 9 + [("matmul", 10, 8)]
    assert ev(many).summary("heldout").mape < 0.15
    assert not ev(many).meets_target()
    assert not ev([("gelu", 10, 13), ("matmul", 10, 13)]).meets_target()


def test_tables_have_their_columns():
    rows = [row("gelu", (1024,), dtype="f16", time_us=48.0, which=w) for w in ("fit", "heldout")]
    ev = evaluate("datacenter-gpu", rows)
    header = ev.row_table().splitlines()[0].split()
    assert header == ROW_COLUMNS
    summary = ev.summary_table().splitlines()
    assert summary[0].split()[:5] == ["set", "class", "rows", "MAPE", "geomean"]
    assert [line.split()[:2] for line in summary[1:]] == [
        ["fit", "gelu"],
        ["fit", "all"],
        ["heldout", "gelu"],
        ["heldout", "all"],
    ]
