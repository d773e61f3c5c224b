"""Simulate measured workloads on a chip and say how far off the simulation is.

Each row is simulated the way it was measured: on a fresh eager device, the workload runs
once to warm up, the host waits for the chip, then the timed call runs and the host waits
again; the simulated time is the host's clock between the two waits (the measurements
timed ``op(); torch.cuda.synchronize()`` from the host, the same span). Only the public
API is used (``chipsim.device``, ``chipsim.Tensor``, the op functions), timing-only, so
tensors of gigabytes cost nothing to simulate.

The errors reported are the ones the calibration targets name: per-row relative error,
mean absolute percentage error (MAPE) and, per op class, the geometric mean of
simulated / measured, for the fit and held-out sets apart.

Example:
    >>> from chipsim.calibration import load_measurements, evaluate
    >>> rows = [r for r in load_measurements() if r.op == "softmax"][:2]
    >>> ev = evaluate("datacenter-gpu", rows)
    >>> [(r.row.shape_text, r.row.time_us) for r in ev.results]
    [('4096x32', 13.113), ('4096x64', 13.351)]
    >>> ev.summary().rows, all(r.simulated_us > 0 for r in ev.results)
    (2, True)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

import chipsim
from chipsim.calibration.measurements import SETS, Measurement
from chipsim.calibration.workloads import ChipOps, synchronize, workload
from chipsim.i18n import N_, pad, tr

TARGET_MAPE = 0.15
TARGET_BAND = (0.85, 1.15)


def simulate_us(row: Measurement, chip: str | chipsim.Chip, *, synchronous: bool = False) -> float:
    """Simulated time of ``row``'s workload on ``chip`` in microseconds (see module doc)."""
    chip = chipsim.chip(chip)
    if row.call == "compiled":  # one op inside torch.compile: the call enters its wrapper
        launch = chip.launch
        launch = dataclasses.replace(
            launch, eager_cycles=launch.compiled, overlap_cycles=launch.compiled_overlap_cycles
        )
        chip = dataclasses.replace(chip, launch=launch)
    fn = workload(row.op)
    dev = chipsim.device(chip, functional=False)
    dtype = getattr(chipsim, row.dtype)
    inputs = []
    for shape in row.shapes:
        ttype = chipsim.TensorType(shape, dtype)
        inputs.append(chipsim.Tensor(dev.upload(np.empty(0), ttype), ttype, dev))
    ops = ChipOps(dev, synchronous)
    with dev:
        out = fn(ops, *inputs)  # warm-up call, as the measurements did
        del out
        start = synchronize(dev)
        out = fn(ops, *inputs)
        end = synchronize(dev)
        del out
    return (end - start) / chip.clock_hz * 1e6


@dataclass(frozen=True, slots=True)
class Result:
    """One row: measured and simulated time."""

    row: Measurement
    simulated_us: float

    @property
    def ratio(self) -> float:
        """Simulated / measured (1.0 is perfect, 0.5 is twice too fast)."""
        return self.simulated_us / self.row.time_us

    @property
    def error(self) -> float:
        """Signed relative error, (simulated - measured) / measured."""
        return self.ratio - 1.0


@dataclass(frozen=True, slots=True)
class Summary:
    """Errors over a group of rows."""

    rows: int
    mape: float  # mean absolute relative error (0.15 = 15%)
    geomean: float  # geometric mean of simulated / measured
    worst: float  # largest absolute relative error

    @staticmethod
    def of(results: Sequence[Result]) -> Summary:
        if not results:
            return Summary(0, math.nan, math.nan, math.nan)
        errors = [abs(r.error) for r in results]
        logs = [math.log(r.ratio) for r in results]
        return Summary(
            len(results), sum(errors) / len(errors), math.exp(sum(logs) / len(logs)), max(errors)
        )


@dataclass(frozen=True)
class Evaluation:
    """Every row's result on one chip, with summaries by set and op class."""

    chip: str
    results: tuple[Result, ...]

    def select(self, set: str | None = None, op: str | None = None) -> list[Result]:
        return [
            r
            for r in self.results
            if (set is None or r.row.set == set) and (op is None or r.row.op == op)
        ]

    def summary(self, set: str | None = None, op: str | None = None) -> Summary:
        """Errors of the rows of one set and/or op class (``None``: all of them)."""
        return Summary.of(self.select(set, op))

    @property
    def ops(self) -> list[str]:
        """The op classes present, in first-seen order."""
        return list(dict.fromkeys(r.row.op for r in self.results))

    def meets_target(
        self, set: str = "heldout", mape: float = TARGET_MAPE, band: tuple = TARGET_BAND
    ) -> bool:
        """Issue 13's bar: MAPE <= ``mape`` and every class's geomean within ``band``."""
        if self.summary(set).mape > mape:
            return False
        return all(band[0] <= self.summary(set, op).geomean <= band[1] for op in self.ops)

    def summary_table(self) -> str:
        """Rows: each set x (every class, then all); columns: rows, MAPE, geomean, worst."""
        _set_names = (N_("fit"), N_("heldout"))  # the names of SETS, for the catalogue
        titles = [tr(t) for t in (N_("set"), N_("class"), N_("rows"), "MAPE")]
        titles += [tr(N_("geomean sim/meas")), tr(N_("worst"))]
        widths = (8, 18, 4, 7, 17, 7)
        lines = [
            " ".join(
                pad(t, w) if i < 2 else pad(t, w, right=True)
                for i, (t, w) in enumerate(zip(titles, widths, strict=True))
            )
        ]
        for s in SETS:
            if not self.select(s):
                continue
            for op in [*self.ops, None]:
                sm = self.summary(s, op)
                if sm.rows:
                    lines.append(
                        f"{pad(tr(s), 8)} {pad(op or tr(N_('all')), 18)} {sm.rows:4d} "
                        f"{sm.mape:7.1%} {sm.geomean:16.2f}x {sm.worst:7.1%}"
                    )
        return "\n".join(lines)

    def row_table(self, set: str | None = None) -> str:
        """One line per row: op, shapes, dtype, set, measured, simulated, ratio, error."""
        lines = [
            f"{'op':16} {'shape':26} {'dtype':5} {'set':7} {'measured_us':>12} "
            f"{'simulated_us':>12} {'sim/meas':>8} {'error':>7}"
        ]
        for r in self.select(set):
            lines.append(
                f"{r.row.op:16} {r.row.shape_text:26} {r.row.dtype:5} {r.row.set:7} "
                f"{r.row.time_us:12.2f} {r.simulated_us:12.2f} {r.ratio:8.2f} {r.error:+7.1%}"
            )
        return "\n".join(lines)


def evaluate(
    chip: str | chipsim.Chip, rows: Iterable[Measurement], *, synchronous: bool = False
) -> Evaluation:
    """Simulate every row on ``chip`` and collect the errors (deterministic)."""
    chip = chipsim.chip(chip)
    results = tuple(Result(r, simulate_us(r, chip, synchronous=synchronous)) for r in rows)
    return Evaluation(chip.name, results)
