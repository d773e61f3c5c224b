"""Fit a ``cpu-simd`` chip to this machine's numpy timings and write it as TOML.

:func:`calibrate_host` fits five fields of the ``cpu-simd`` preset (eager launch cycles,
DRAM bytes per cycle, the L2's (and with it the core's load and store) bytes per cycle,
SIMD element-slots per cycle, tensor-core MACs per cycle) to the calibration rows of
:mod:`~chipsim.calibration.host_timing` with :func:`~chipsim.calibration.fit.fit_chip`,
simulating each workload call for call (``synchronous``: on a CPU the host waits for every
numpy call). The chip gets the core's L2 as a cache in front of DRAM, of the size the
machine reports (:func:`~chipsim.calibration.host_timing.core_l2_bytes`): arrays of a few
hundred KiB stay there from one numpy call to the next, which a model streaming every call
from DRAM makes 1.6-2x too slow. Everything else is the preset. Given the same measurements
and cache size, the chip and its TOML file are the same, byte for byte.

The chip runs on a 100 MHz *model clock*: chipsim's rates are integers per cycle, and at
100 MHz one unit of bandwidth is 0.1 GB/s and one cycle of overhead 10 ns, so every fitted
value keeps about three significant digits. The preset's other fields are re-expressed at
that clock with their times in seconds unchanged (:func:`base_chip`).

Example:
    >>> chip = base_chip()
    >>> chip.clock_hz, chip.dram_bandwidth == chipsim.chip("cpu-simd").dram_bandwidth
    (100000000, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import chipsim
from chipsim.calibration.chip_file import chip_toml
from chipsim.calibration.evaluate import Evaluation, evaluate
from chipsim.calibration.fit import FitResult, Param, fit_chip, with_fields
from chipsim.calibration.host_timing import core_l2_bytes, machine_description
from chipsim.calibration.measurements import Measurement, split

MODEL_CLOCK_HZ = 100_000_000
BASE = "cpu-simd"

# Per-cycle rates and cycle counts of a chip: rescaled when the clock changes (seconds kept).
_RATE_FIELDS = (
    "alu.count",
    "mac.macs_per_cycle",
    "dma.bytes_per_cycle",
    "dram.bytes_per_cycle",
    "sram.bytes_per_cycle",
)
_CYCLE_FIELDS = (
    "alu.fixed_cycles",
    "mac.fixed_cycles",
    "simd.fixed_cycles",
    "tensor_core.fixed_cycles",
    "dma.setup_cycles",
    "dram.latency_cycles",
    "launch.eager_cycles",
    "launch.graph_cycles",
    "launch.library_cycles",
    "launch.compiled_cycles",
    "launch.overlap_cycles",
    "launch.compiled_overlap_cycles",
    "launch.device_cycles",
    "launch.sync_cycles",
)

L2_LINE_BYTES = 64  # every x86-64 and Arm server core's cache line

FIT_PARAMS = (
    Param(("launch.eager_cycles",), 1, 10_000_000),
    Param(("dram.bytes_per_cycle",), 1, 1_000_000),
    Param(("l2.bytes_per_cycle", "dma.bytes_per_cycle"), 1, 1_000_000),
    Param(("simd.count",), 1, 1_000_000),
    Param(("tensor_core.count",), 1, 100_000_000),
)
"""The fields fitted to this machine (the rest is the rescaled ``cpu-simd`` preset)."""


def base_chip(clock_hz: int = MODEL_CLOCK_HZ, base: str = BASE, l2_bytes: int = 0) -> chipsim.Chip:
    """The ``base`` preset at ``clock_hz``: every time in seconds and rate per second kept.

    The tensor core becomes a [1, 1, 1] tile (no tile rounding) and the SIMD unit one lane
    wide, so that their counts can hold this machine's rates to about three digits. With
    ``l2_bytes`` the chip also gets an L2 cache of that size in front of DRAM (64-byte lines,
    one model cycle of latency, the SRAM's bandwidth until a fit sets it).
    """
    chip = chipsim.chip(base)
    scale = clock_hz / chip.clock_hz
    data = chip.to_dict()
    values: dict[str, object] = {}
    for path in _RATE_FIELDS:
        section, key = path.split(".")
        values[path] = max(1, round(data[section][key] / scale))
    for path in _CYCLE_FIELDS:
        section, key = path.split(".")
        values[path] = max(1, round(data[section][key] * scale))
    m, n, k = chip.tensor_core.tile
    values["tensor_core.tile"] = (1, 1, 1)
    values["tensor_core.count"] = max(1, round(m * n * k * chip.tensor_core.count / scale))
    values["simd.lanes"] = 1
    values["simd.count"] = max(1, round(chip.simd.lanes * chip.simd.count / scale))
    values["clock_hz"] = clock_hz
    if l2_bytes:
        values["l2.capacity_bytes"] = l2_bytes
        values["l2.line_bytes"] = L2_LINE_BYTES
        values["l2.latency_cycles"] = 1
        values["l2.bytes_per_cycle"] = values["sram.bytes_per_cycle"]
    return with_fields(chip, values)


@dataclass(frozen=True)
class HostCalibration:
    """This machine's measurements, the fitted chip and how well it predicts both sets."""

    machine: str
    rows: tuple[Measurement, ...]
    fit: FitResult
    evaluation: Evaluation  # every row (fit and held-out) on the fitted chip

    @property
    def chip(self) -> chipsim.Chip:
        if self.fit.chip is None:  # fit_chip always returns one; keeps type checkers honest
            raise ValueError("the fit returned no chip")
        return self.fit.chip


def calibrate_host(
    rows: Sequence[Measurement], name: str = "this-cpu", l2_bytes: int | None = None
) -> HostCalibration:
    """Fit the chip to the ``fit`` rows and evaluate it on all ``rows`` (no timing here).

    ``l2_bytes`` is the size of one core's L2 on the machine the rows were timed on; by
    default this machine's (:func:`~chipsim.calibration.host_timing.core_l2_bytes`).
    """
    machine = rows[0].where if rows else "an unknown machine"
    l2 = core_l2_bytes() if l2_bytes is None else l2_bytes
    about = {"name": name, "description": _fitted_to(machine)}
    start = with_fields(base_chip(l2_bytes=l2), about)
    result = fit_chip(start, FIT_PARAMS, split(rows, "fit"), synchronous=True)
    fitted = result.chip or start
    return HostCalibration(machine, tuple(rows), result, evaluate(fitted, rows, synchronous=True))


def _fitted_to(machine: str) -> str:
    """The description of a chip fitted to ``machine`` (the one way it is written)."""
    return f"{BASE} fitted to {machine}"


def fitted_here(chip: chipsim.Chip) -> bool:
    """Was ``chip`` fitted by :func:`calibrate_host` to this machine as it is now (its CPU,
    CPU count, Python and numpy, :func:`~chipsim.calibration.host_timing.machine_description`)?
    A chip file calibrated on another machine, or before an upgrade of numpy, predicts that
    machine, not this one.

    Example:
        >>> fitted_here(chipsim.chip("cpu-simd"))  # a preset: fitted to nothing
        False
    """
    return chip.description == _fitted_to(machine_description())


def matmul_flops(rows: Sequence[Measurement]) -> list[tuple[str, float]]:
    """(shapes, FLOP/s) of every matmul row, in order."""
    out = []
    for r in rows:
        if r.op == "matmul":
            (m, k), (_, n) = r.shapes
            out.append((r.shape_text, 2 * m * n * k / (r.time_us * 1e-6)))
    return out


def stream_bandwidth(rows: Sequence[Measurement]) -> list[tuple[str, int, float]]:
    """(shapes, bytes moved, bytes/s) of every ``add`` row longer than one element: two
    arrays read and one written, so the bytes moved are three f32 arrays."""
    out = []
    for r in rows:
        if r.op == "add" and math.prod(r.shapes[0]) > 1:
            moved = 3 * 4 * math.prod(r.shapes[0])
            out.append((r.shape_text, moved, moved / (r.time_us * 1e-6)))
    return out


def host_chip_toml(cal: HostCalibration) -> str:
    """The fitted chip as TOML, each field saying whether it was fitted or kept."""
    chip, fit = cal.chip, cal.fit.values
    launch_us = fit["launch.eager_cycles"] / chip.clock_hz * 1e6
    gbs = fit["dram.bytes_per_cycle"] * chip.clock_hz / 1e9
    l2_gbs = fit["l2.bytes_per_cycle"] * chip.clock_hz / 1e9
    gflops = 2 * fit["tensor_core.count"] * chip.clock_hz / 1e9
    simd = fit["simd.count"] * chip.clock_hz / 1e9
    same = f"{BASE} preset, same seconds at the model clock"
    comments: dict[str, str] = {key: same for key in _dotted(chip.to_dict())}
    for key in ("name", "description", "energy.source"):
        comments.pop(key)
    comments.update(
        {
            "clock_hz": f"model clock ({MODEL_CLOCK_HZ / 1e6:g} MHz): 1 cycle = 10 ns",
            "launch.eager_cycles": f"fitted: {launch_us:.3g} us per numpy call",
            "dram.bytes_per_cycle": f"fitted: {gbs:.3g} GB/s streaming from DRAM",
            "l2.capacity_bytes": "this machine's L2 per core (from /sys)",
            "l2.line_bytes": "a CPU cache line",
            "l2.latency_cycles": "about 10 ns",
            "l2.bytes_per_cycle": f"fitted: {l2_gbs:.3g} GB/s from the L2",
            "dma.bytes_per_cycle": "the L2's bandwidth (fitted with it): loads and stores",
            "simd.lanes": "one lane: count holds the whole rate",
            "simd.count": f"fitted: {simd:.3g} G element-slots/s (exp in cache)",
            "tensor_core.tile": "no tile rounding: count holds the whole rate",
            "tensor_core.count": f"fitted: MAC/cycle, {gflops:.3g} GFLOP/s (numpy's BLAS)",
        }
    )
    header = [
        f"{chip.name}: {BASE} fitted to this machine by `python -m chipsim calibrate`.",
        f"Machine: {cal.machine}.",
        "Fitted to (best times of numpy calls, one BLAS thread):",
        *(f"  {r.op} f32[{r.shape_text}]: {r.time_us:.4g} us" for r in split(cal.rows, "fit")),
        f"Fit: mean squared log error {cal.fit.loss:.4f}. Load: chipsim.chip('<this file>').",
    ]
    return chip_toml(chip, comments, header)


def _dotted(data: dict, prefix: str = "") -> list[str]:
    out = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        out.extend(_dotted(value, path + ".") if isinstance(value, dict) else [path])
    return out
