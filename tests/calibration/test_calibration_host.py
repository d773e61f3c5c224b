"""`python -m chipsim calibrate`: the fitted chip file, its determinism, the command's output."""

import pytest

import chipsim
from chipsim.calibration import Measurement, simulate_us, with_fields, write_measurements
from chipsim.calibration.chip_file import chip_toml
from chipsim.calibration.fit import expand
from chipsim.calibration.host import FIT_PARAMS, base_chip, calibrate_host, host_chip_toml
from chipsim.calibration.host_timing import (
    QUICK,
    ProgressBar,
    _size_bytes,
    core_l2_bytes,
    machine_description,
    time_numpy,
)
from chipsim.cli import main

from .columns import ROW_COLUMNS

TRUTH = {
    "launch.eager_cycles": 80,
    "dram.bytes_per_cycle": 150,
    "l2.bytes_per_cycle": 600,
    "simd.count": 20,
    "tensor_core.count": 400,
}
L2 = 2**20  # the test machine's L2 per core


@pytest.fixture(scope="module")
def rows():
    """Timings a machine exactly like the model (with TRUTH's values) would show."""
    truth = with_fields(base_chip(l2_bytes=L2), expand(FIT_PARAMS, TRUTH))
    out = []
    for which, plan in QUICK.items():
        for name, shapes in plan:
            probe = Measurement(name, "t", shapes, "f32", 1.0)
            us = simulate_us(probe, truth, synchronous=True)
            out.append(
                Measurement(
                    name,
                    f"{which}-{name}",
                    shapes,
                    "f32",
                    us,
                    set=which,
                    source="this-machine",
                    where="a test machine",
                )
            )
    return out


def test_base_chip_keeps_the_presets_seconds():
    cpu, base = chipsim.chip("cpu-simd"), base_chip()
    assert base.clock_hz == 100_000_000
    assert base.dram_bandwidth == cpu.dram_bandwidth
    assert base.tensor_flops_per_cycle * base.clock_hz == cpu.tensor_flops_per_cycle * cpu.clock_hz
    assert base.vector_flops_per_cycle * base.clock_hz == cpu.vector_flops_per_cycle * cpu.clock_hz
    assert base.launch.eager_cycles / base.clock_hz == cpu.launch.eager_cycles / cpu.clock_hz


def test_fit_finds_the_machine_and_the_file_loads_back(rows, tmp_path):
    cal = calibrate_host(rows, l2_bytes=L2)
    # every field within 1%: the L2's rate moves a 128 KiB call by less than a model cycle
    assert cal.fit.values == pytest.approx(TRUTH, rel=0.01)
    assert cal.fit.loss == pytest.approx(0.0, abs=1e-8)
    assert cal.evaluation.summary("heldout").mape < 1e-3  # the model predicts itself
    path = tmp_path / "mine.toml"
    path.write_text(host_chip_toml(cal))
    assert chipsim.chip(str(path)) == cal.chip
    text = path.read_text()
    assert "fitted:" in text and "this machine" in text and "a test machine" in text


def test_same_timings_same_chip_file(rows):
    first, again = calibrate_host(rows, l2_bytes=L2), calibrate_host(list(rows), l2_bytes=L2)
    assert host_chip_toml(first) == host_chip_toml(again)


def test_the_cache_is_what_this_machine_reports_and_decides_small_calls():
    assert _size_bytes("2048K") == 2**21 and _size_bytes("48K") == 48 * 2**10
    assert _size_bytes("1M") == 2**20 and core_l2_bytes() >= 2**16
    chip = with_fields(base_chip(l2_bytes=L2), expand(FIT_PARAMS, TRUTH))
    small = Measurement("add", "t", ((2**14,), (2**14,)), "f32", 1.0)  # 3 x 64 KiB: in the L2
    large = Measurement("add", "t", ((2**20,), (2**20,)), "f32", 1.0)  # 3 x 4 MiB: from DRAM
    no_l2 = with_fields(chip, {"l2.capacity_bytes": 0})

    def slower_without_l2(row):
        return simulate_us(row, no_l2, synchronous=True) / simulate_us(row, chip, synchronous=True)

    assert slower_without_l2(small) > 1.4  # read again from the L2 at 4x DRAM's rate
    assert slower_without_l2(large) == pytest.approx(1.0, abs=0.05)  # does not fit: DRAM


@pytest.mark.parametrize("name", chipsim.chips())
def test_every_preset_survives_a_trip_through_toml(name, tmp_path):
    path = tmp_path / f"{name}.toml"
    path.write_text(chip_toml(chipsim.chip(name), {"simd.lanes": "a comment"}, ["header"]))
    assert chipsim.chip(str(path)) == chipsim.chip(name)


def test_command_refits_saved_timings_to_the_same_file(rows, tmp_path, capsys):
    saved = tmp_path / "timings.csv"
    saved.write_text(write_measurements(rows))
    outputs = []
    for i in range(2):
        out = tmp_path / f"chip{i}.toml"
        assert main(["calibrate", "--measurements", str(saved), "-o", str(out)]) == 0
        outputs.append(out.read_text())
        assert (tmp_path / f"chip{i}.csv").read_text() == saved.read_text()
    assert outputs[0] == outputs[1]
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("op "))
    assert header.split() == ROW_COLUMNS
    assert "heldout  all" in printed and "per-call overhead" in printed


def test_command_measures_this_machine(tmp_path, capsys):
    out = tmp_path / "quick.toml"
    assert main(["calibrate", "--quick", "-o", str(out)]) == 0
    chip = chipsim.chip(str(out))
    assert chip.name == "this-cpu" and chip.clock_hz == 100_000_000
    rows = (tmp_path / "quick.csv").read_text().splitlines()
    assert len(rows) == 1 + len(QUICK["fit"]) + len(QUICK["heldout"])
    printed = capsys.readouterr().out
    assert "Timing this machine with numpy (1 thread)" in printed
    assert "simulated_us" in printed


def test_command_reports_bad_input_without_a_traceback(tmp_path, capsys):
    assert main(["calibrate", "--measurements", str(tmp_path / "none.csv")]) == 2
    assert "calibrate: cannot read" in capsys.readouterr().err


def test_command_compares_a_chip_with_the_published_a100_rows(capsys):
    assert main(["calibrate", "--a100"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("datacenter-gpu vs 84 published A100 measurements")
    assert "LLMCompass" in printed and "https://" in printed
    for line in ("fit      all", "heldout  all", "heldout  gelu", "heldout  matmul"):
        assert line in printed
    assert "held-out: " in printed and "the target (MAPE <= 15%" in printed


def test_timing_takes_the_best_call_after_a_warm_up():
    ticks = iter(range(1000))
    seconds, calls = time_numpy(
        "add", ((4,), (4,)), min_seconds=5, min_calls=3, clock=lambda: next(ticks)
    )
    assert (seconds, calls) == (1, 5)  # every call "takes" one tick: five to pass 5 s


def test_progress_bar_is_silent_off_a_terminal(capsys):
    import sys

    bar = ProgressBar(3, stream=sys.stderr)
    for label in "abc":
        bar(label)
    bar.close()
    assert bar.done == 3 and capsys.readouterr().err == ""


def test_a_chip_file_counts_as_this_machines_only_when_fitted_to_it(rows, tmp_path):
    """A saved chip file predicts the machine it was fitted to: the XLA chapter uses one only
    when it names this machine as it is now (CPU, CPU count, Python, numpy), not a file
    copied from another machine or fitted before an upgrade."""
    from dataclasses import replace

    from chipsim.calibration.host import fitted_here

    elsewhere = calibrate_host(rows, l2_bytes=L2)  # timed on "a test machine"
    path = tmp_path / "this-cpu.toml"
    path.write_text(host_chip_toml(elsewhere))
    assert not fitted_here(chipsim.chip(str(path)))
    here = [replace(r, where=machine_description()) for r in rows]
    path.write_text(host_chip_toml(calibrate_host(here, l2_bytes=L2)))
    assert fitted_here(chipsim.chip(str(path)))  # through the file, as the chapter loads it
    assert not fitted_here(chipsim.chip("cpu-simd"))
