"""The deterministic fit: recovers known parameters, including ones hidden by a bottleneck."""

import math

import pytest

import chipsim
from chipsim.calibration import Measurement, Param, fit_chip, minimize, simulate_us, with_fields
from chipsim.errors import ChipConfigError


def test_recovers_an_integer_optimum_and_is_deterministic():
    params = [Param(("a",), 1, 10**6), Param(("b",), 1, 10**6)]

    def residuals(v):
        return [
            math.log((v["a"] + 2 * v["b"]) / 5000),
            math.log(v["a"] / 777),
            math.log(v["b"] / 2111.6),
        ]

    first = minimize(residuals, params, {"a": 10, "b": 10})
    assert first == minimize(residuals, params, {"a": 10, "b": 10})
    assert abs(first.values["a"] - 777) <= 8 and abs(first.values["b"] - 2112) <= 20
    assert first.evaluations < 60


def test_a_parameter_hidden_behind_a_bottleneck_is_still_found():
    # time = max(memory, work / rate): at the start the rate is so high that moving it a
    # little changes nothing; the fit must probe further to see it matters
    params = [Param(("rate",), 1, 10**6), Param(("bw",), 1, 10**6)]
    rows = [(1000, 10), (10, 1000)]  # (work, bytes): one compute-bound, one memory-bound

    def times(v):
        return [max(b / v["bw"], w / v["rate"]) for w, b in rows]

    truth = times({"rate": 50, "bw": 2})
    res = minimize(
        lambda v: [math.log(t / m) for t, m in zip(times(v), truth, strict=False)],
        params,
        {"rate": 100_000, "bw": 100},
    )
    assert res.values == {"rate": 50, "bw": 2}
    assert res.loss == 0.0


def test_fit_chip_recovers_the_chip_that_made_the_measurements():
    truth = with_fields(
        chipsim.chip("edge-npu"),
        {"launch.eager_cycles": 3100, "dram.bytes_per_cycle": 24, "dma.bytes_per_cycle": 24},
    )
    shapes = [((16,), (16,)), ((65536,), (65536,)), ((262144,), (262144,))]
    rows = [
        Measurement(
            "add",
            "t",
            s,
            "f32",
            simulate_us(Measurement("add", "t", s, "f32", 1.0), truth),
            set="fit",
        )
        for s in shapes
    ]
    params = [
        Param(("launch.eager_cycles",), 10, 10**6),
        Param(("dram.bytes_per_cycle", "dma.bytes_per_cycle"), 1, 10**4),
    ]
    res = fit_chip("edge-npu", params, rows)
    assert res.values == {"launch.eager_cycles": 3100, "dram.bytes_per_cycle": 24}
    assert res.chip.dma.bytes_per_cycle == 24 and res.loss == pytest.approx(0.0, abs=1e-12)
    assert fit_chip("edge-npu", params, rows) == res


def test_with_fields_checks_like_a_chip_file():
    npu = chipsim.chip("edge-npu")
    assert with_fields(npu, {"simd.lanes": 16}).simd.lanes == 16
    with pytest.raises(ChipConfigError, match="no field 'simd.width'"):
        with_fields(npu, {"simd.width": 16})
    with pytest.raises(ChipConfigError, match="simd.lanes.*positive int"):
        with_fields(npu, {"simd.lanes": 0})
