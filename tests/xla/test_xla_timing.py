"""The wall-time harness: numpy eager is the graph's meaning, the statistics are what the page
quotes, and the measuring process returns one row per graph (no timing is asserted)."""

from __future__ import annotations

import numpy as np
import pytest
from xla_graphs import fixture_graphs

import chipsim as cs
from chipsim.workloads.eager import run_eager
from chipsim.xla.timing import WallTimes, measure_wall, numpy_eager, numpy_op_seconds


@pytest.mark.parametrize("name", ["add_mul", "linear_relu", "cnn"])
def test_numpy_eager_computes_what_the_interpreter_computes(name):
    graph = fixture_graphs()[name]
    x = np.random.default_rng(0).standard_normal(graph.inputs[0].shape).astype(np.float32)
    np.testing.assert_allclose(numpy_eager(graph)(x)[0], cs.interpret(graph, x)[0], rtol=1e-6)


def test_statistics():
    w = WallTimes(
        eager=(4.0, 5.0, 6.0, 7.0, 8.0),
        compiled=(1.0, 2.0, 2.0, 2.0, 3.0),
        compile_seconds=0.1,
        threads=1,
    )
    assert w.eager_median == 6.0 and w.compiled_median == 2.0 and w.speedup == 3.0
    assert w.speedup_range() == (5.0 / 2.0, 7.0 / 2.0)
    assert w.spread() == pytest.approx(max(2.0 / 6.0, 0.0 / 2.0))


def test_synchronous_eager_waits_for_every_kernel():
    """On a CPU the host is the chip: waiting after each op is never faster."""
    graph = fixture_graphs()["cnn"]
    zeros = np.zeros(graph.inputs[0].shape, np.float32)
    queued = run_eager(graph, zeros, chip="cpu-simd", functional=False).report
    waited = run_eager(graph, zeros, chip="cpu-simd", functional=False, synchronous=True).report
    assert waited.cycles > queued.cycles
    assert [k.name for k in waited.kernels] == [k.name for k in queued.kernels]


def test_measure_wall_returns_samples_for_every_graph():
    pytest.importorskip("jax")
    graphs = {name: fixture_graphs()[name] for name in ("add_mul", "linear_relu")}
    times = measure_wall(graphs, samples=3, min_sample_s=0.001)
    assert list(times) == list(graphs)
    for t in times.values():
        assert len(t.eager) == len(t.compiled) == 3 and t.threads == 1
        assert min(t.eager) > 0 and min(t.compiled) > 0 and t.compile_seconds > 0
    ops = {n.op for n in graphs["linear_relu"].nodes if not n.is_constant}
    assert set(times["linear_relu"].per_op) == ops  # one operator at a time, every kind


def test_per_operator_times_cover_every_operator_and_sum_below_a_slow_one():
    graph = fixture_graphs()["linear_relu"]
    ops = [n.op for n in graph.nodes if not n.is_constant]
    seconds = numpy_op_seconds(graph, calls=3)
    assert set(seconds) == set(ops) and all(s > 0 for s in seconds.values())
    ticks = iter(range(0, 10_000))  # every call "takes" one tick of 1 s: best = 1 s per node
    fake = numpy_op_seconds(graph, calls=3, clock=lambda: next(ticks))
    assert fake == {op: float(ops.count(op)) for op in set(ops)}
