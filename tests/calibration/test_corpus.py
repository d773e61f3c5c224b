"""The multi-source A100 corpus (issue 25): every row cited, its conversions checked, and the
leave-one-source-out machinery (host profiles, variants, probes, the grid choice) tested on
rows whose answer is known."""

import dataclasses
import math

import pytest

import chipsim
from chipsim.calibration import load_corpus, load_sources
from chipsim.calibration.evaluate import simulate_us
from chipsim.calibration.loso import (
    GRID,
    choose,
    leave_one_source_out,
    measure_host,
    point_key,
    point_of,
    points,
    probe_rows,
    row_key,
)
from chipsim.calibration.measurements import METHODS, Measurement
from chipsim.calibration.variants import VARIANTS, with_variant
from chipsim.hw import HostProfile, get_host, list_hosts

ROWS = load_corpus()
SOURCES = load_sources()


def test_at_least_five_sources_besides_llmcompass_each_listed():
    others = {r.source for r in ROWS} - {"llmcompass"}
    assert len(others) >= 5
    assert others <= set(SOURCES)


def test_every_row_cites_its_source_where_how_and_on_what():
    for r in ROWS:
        src = SOURCES[r.source]
        assert src["citation"] and src["url"].startswith("https://"), r.label
        assert r.where and r.published and r.derivation and r.timed, r.label
        assert r.method in METHODS, r.label
        assert r.variant in VARIANTS, r.label
        if r.method != "kernel" and r.source != "llmcompass":
            assert r.host, f"{r.label}: a host-bound row names its host"


def test_triton_ci_rows_follow_the_sources_own_formula():
    peak = 108 * 4 * 1.35e6 * 512 * 1e-9  # get_max_tensorcore_tflops(float16) at 1350 MHz
    for r in ROWS:
        if r.source == "triton-ci" and r.op == "matmul":
            (m, k), (_, n) = r.shapes
            util = float(r.published.rsplit("=", 1)[1])
            assert r.time_us == pytest.approx(2 * m * n * k / (util * peak * 1e12) * 1e6, rel=1e-4)


def test_liger_rows_are_the_published_median_in_us():
    for r in ROWS:
        if r.source == "liger":
            ms = float(r.published.split("=")[1].split(" ")[0])
            assert r.time_us == pytest.approx(ms * 1000, rel=1e-6)
            assert r.method == "kernel" and "do_bench" in r.timed


def test_host_profile_round_trips_through_a_chip():
    gpu = chipsim.chip("datacenter-gpu")
    host = get_host("llmcompass-host")
    assert HostProfile.of(host.apply(gpu)).framework_us == pytest.approx(
        host.framework_us, abs=0.01
    )
    assert "llmcompass-host" in list_hosts()
    with pytest.raises(chipsim.ChipConfigError, match="wrapper_overlap_us"):
        HostProfile("bad", wrapper_us=1.0, wrapper_overlap_us=2.0)


def test_variant_keeps_host_seconds_and_sets_clock_and_bandwidth():
    gpu = chipsim.chip("datacenter-gpu")
    ci = with_variant(gpu, "A100-40GB@1350MHz")
    assert ci.clock_hz == 1_350_000_000
    assert ci.dram_bandwidth == pytest.approx(1555.2e9, rel=1e-3)
    assert ci.launch.eager_cycles / ci.clock_hz == pytest.approx(
        gpu.launch.eager_cycles / gpu.clock_hz, rel=1e-3
    )
    assert with_variant(gpu, "A100-SXM4-80GB") == gpu


def _row(**kw):
    base = dict(op="softmax", family="t", shapes=((64, 64),), dtype="f16", time_us=1.0)
    return Measurement(**{**base, **kw})


def test_kernel_rows_pay_no_host_and_call_sync_rows_do():
    gpu = chipsim.chip("datacenter-gpu")
    kernel = simulate_us(_row(method="kernel", call="aten"), gpu)
    synced = simulate_us(_row(method="call+sync", call="aten", source="llmcompass"), gpu)
    host = get_host("llmcompass-host")
    device_us = gpu.launch.device_cycles / gpu.clock_hz * 1e6  # host to GPU: not in events
    gap_us = gpu.launch.kernel_gap_cycles / gpu.clock_hz * 1e6  # in events; under the host's
    expected = host.framework_us + host.sync_us + device_us - gap_us  # dispatch otherwise
    assert synced - kernel == pytest.approx(expected, abs=1.0)


def test_harness_rows_pay_the_slower_of_host_and_gpu_per_call():
    gpu = chipsim.chip("datacenter-gpu")
    slow = {"h": HostProfile("h", wrapper_us=30.0, wrapper_overlap_us=0.0)}
    tiny = simulate_us(_row(method="harness", call="extension", host="h"), gpu, hosts=slow)
    assert tiny == pytest.approx(30.0, rel=0.02)  # host-bound: the dispatch per call


def test_a_probe_measures_a_known_host():
    gpu = chipsim.chip("datacenter-gpu")
    truth = {"h": HostProfile("h", wrapper_us=37.0, wrapper_overlap_us=0.0)}
    row = _row(method="harness", call="extension", host="h")
    row = dataclasses.replace(row, time_us=simulate_us(row, gpu, hosts=truth))
    start = HostProfile("h", wrapper_us=10.0, wrapper_overlap_us=0.0)
    assert measure_host([row], gpu, start).wrapper_us == pytest.approx(37.0, abs=0.2)


def test_probes_are_the_smallest_host_bound_row_per_kind_of_call():
    probes = probe_rows([r for r in ROWS if r.source == "llmcompass"])
    assert sorted(r.call for r in probes) == ["aten", "compiled", "cublas"]
    assert probe_rows([r for r in ROWS if r.method == "kernel"]) == []


def test_the_grid_choice_recovers_the_point_that_made_synthetic_rows():
    """Rows 'measured' as the simulation at one grid point: every fold chooses that point."""
    truth = dict(next(p for p in points(list(GRID)) if dict(p)["dram.sustained_pct"] == 85))
    truth["launch.device_cycles"] = GRID["launch.device_cycles"][1]
    full = tuple((n, truth[n]) for n in GRID)
    rows = [
        _row(source=s, op=op, shapes=((64 * i, 64),), method="kernel", where=f"{s}{i}")
        for s in ("a", "b", "c")
        for op in ("matmul", "softmax")
        for i in (1, 2)
    ]

    def fake_time(r, p):  # any smooth, distinct function of the point and the row
        d = dict(p)
        return sum(v * (j + 1) for j, v in enumerate(d.values())) * r.shapes[0][0] / 1e3

    times = {}
    for r in rows:
        for p in points(list(GRID)):
            sub = point_of(r, p)
            times.setdefault(point_key(sub), {})[row_key(r)] = fake_time(r, sub)
    rows = [dataclasses.replace(r, time_us=fake_time(r, point_of(r, full))) for r in rows]
    point, loss = choose(times, rows)
    assert dict(point) == truth and loss == pytest.approx(0.0, abs=1e-12)
    for fold in leave_one_source_out(rows, times):
        assert dict(fold.point) == truth
        assert all(math.isclose(x.ratio, 1.0) for x in fold.results)


class _FakeCuda:
    def __init__(self, clock):
        self.clock = clock

    def is_available(self):
        return True

    def synchronize(self):
        self.clock.t += 4e-6  # 4 us to see the GPU idle


class _FakeTorch:
    """Just enough of torch for the host probes: each call advances a fake clock."""

    float16 = "f16"

    def __init__(self):
        self.t = 0.0
        self.cuda = _FakeCuda(self)
        torch = self

        class Function:
            @classmethod
            def apply(cls, x):
                torch.t += 40e-6
                return cls.forward(None, x)

        self.autograd = type("autograd", (), {"Function": Function})

    def clock(self):
        return self.t

    def ones(self, *shape, **kw):
        return shape

    def neg(self, x):
        self.t += 12e-6
        return x

    def matmul(self, a, b):
        self.t += 25e-6
        return a


def test_calibrate_measures_a_gpu_host_from_call_and_sync_timings():
    from chipsim.calibration.gpu_host import host_from_timings, time_host_calls

    torch = _FakeTorch()
    t = time_host_calls(torch, calls=3, clock=torch.clock)
    assert t["sync"] == pytest.approx(4.0) and t["neg"] == pytest.approx(16.0)
    gpu = chipsim.chip("datacenter-gpu")
    host = host_from_timings(t, gpu)
    device_us = gpu.launch.device_cycles / gpu.clock_hz * 1e6  # the chip's, not the host's
    assert host.framework_us == pytest.approx(12.0 - device_us)
    assert host.library_us == pytest.approx(25.0 - device_us)
    assert host.wrapper_us == pytest.approx(40.0 + 12.0 - device_us)
    assert host.sync_us == pytest.approx(4.0)
