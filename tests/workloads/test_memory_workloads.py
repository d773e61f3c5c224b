"""Static vs dynamic memory workloads (chipsim.workloads.memory): plain data, honest numbers."""

import matplotlib
import numpy as np

import chipsim as cs
from chipsim.workloads import memory as wm
from chipsim.workloads.mlp import mlp_params, mlp_train_step

matplotlib.use("Agg")


def test_the_train_step_is_gradient_descent_on_the_squared_error():
    dims = (6, 5, 3)
    params = mlp_params(dims, seed=1)
    params[1] = np.linspace(-0.1, 0.1, 5).astype(np.float32)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 6)).astype(np.float32)
    t = rng.normal(size=(4, 3)).astype(np.float32)
    w1, b1, w2, b2 = params
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    y = h @ w2 + b2
    g = (y - t) * 2 / y.size
    dw2, db2 = h.T @ g, g.sum(0)
    gz = (g @ w2.T) * (z > 0)
    dw1, db1 = x.T @ gz, gz.sum(0)
    want = [w1 - 0.01 * dw1, b1 - 0.01 * db1, w2 - 0.01 * dw2, b2 - 0.01 * db2]
    with cs.device("edge-npu"):
        got = mlp_train_step(cs.tensor(x), cs.tensor(t), *[cs.tensor(p) for p in params])
        got = [p.numpy() for p in got]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    graph = cs.trace(lambda *a: mlp_train_step(a[-2], a[-1], *a[:-2]), *params, x, t)
    for a, b in zip(cs.compile(graph)(*params, x, t), want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_training_loop_numbers_are_consistent():
    cmp = wm.training_loop(steps=2, batch=16, dims=(64, 128, 8))
    e, s = cmp.eager, cmp.static
    assert e.peak_reserved >= e.peak_allocated > 0
    assert len(e.history) > 0 and all(h.reserved >= h.allocated for h in e.history)
    assert max(h.allocated for h in e.history) == e.peak_allocated
    assert 0.0 <= e.max_fragmentation <= 1.0
    assert s.arena_bytes >= s.arena_lower_bound > 0
    # weights: W1, W2 (64x128, 128x8 f32) and the two biases, each rounded to 64 bytes
    assert s.weights_bytes == 64 * 128 * 4 + 128 * 4 + 128 * 8 * 4 + 64
    assert s.total_bytes == s.weights_bytes + s.io_bytes + s.arena_bytes
    assert cmp.ratio == s.total_bytes / e.peak_reserved
    row = cmp.as_dict()
    assert row["static_total"] == s.total_bytes and row["steps"] == 2
    assert wm.training_loop(steps=2, batch=16, dims=(64, 128, 8)).as_dict() == row  # determinism


def test_the_service_pads_requests_to_power_of_two_buckets():
    rows = wm.request_rows(50, seed=3)
    assert rows == wm.request_rows(50, seed=3) and len(set(rows)) > 10
    assert [wm.bucket(r) for r in (1, 16, 17, 100, 128, 129)] == [16, 16, 32, 128, 128, 256]
    cmp = wm.inference_service(requests=20, dims=(32, 64, 32), seed=3)
    assert cmp.details["served_eagerly"] == 20 and cmp.eager.oom is None
    assert cmp.static.programs == len(cmp.details["buckets"])
    assert cmp.details["padding_overhead"] >= 0.0


def test_small_dram_eager_runs_out_of_memory_while_the_static_plan_fits():
    cmp = wm.out_of_memory_case()
    capacity = cmp.details["dram_capacity"]
    assert cmp.eager.oom is not None and "free but fragmented" in cmp.eager.oom
    assert cmp.details["served_eagerly"] < cmp.details["requests"]
    assert cmp.static.total_bytes <= capacity
    assert cmp.static.dram_peak <= capacity  # measured: every bucket's program was simulated
    assert cs.chip("edge-npu").dram.capacity_bytes > capacity


def test_plot_has_eager_lines_and_the_static_level():
    cmp = wm.training_loop(steps=1, batch=8, dims=(32, 32, 4))
    ax = wm.plot_memory_over_time(cmp)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[:3] == [
        "eager: reserved",
        "eager: allocated",
        "static plan (weights + I/O + arena)",
    ]
    static_line = ax.get_lines()[2]
    assert static_line.get_ydata()[0] == cmp.static.total_bytes / 2**20
    matplotlib.pyplot.close(ax.figure)
