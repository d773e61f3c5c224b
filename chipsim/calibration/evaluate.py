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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

import chipsim
from chipsim.calibration.measurements import SETS, Measurement
from chipsim.calibration.variants import VARIANTS, with_variant
from chipsim.calibration.workloads import ChipOps, synchronize, workload
from chipsim.hw import HostProfile
from chipsim.i18n import N_, tr
from chipsim.text import pad

TARGET_MAPE = 0.15
TARGET_BAND = (0.85, 1.15)


#: Calls that enter through a Python-level wrapper before their launch (the host profile's
#: ``wrapper_us``): a torch.compile'd module, an autograd extension, a Triton launcher.
WRAPPED_CALLS = ("compiled", "triton", "extension")
#: Bytes of a row's f32 working copy a kernel keeps on chip, by implementation (PyTorch's own
#: kernels: the chip's ``sm.row_budget_bytes``): a hand-written Triton kernel holds the whole
#: row in one block up to 65,536 elements (Liger-Kernel's ops/utils.py calculate_settings,
#: MAX_FUSED_SIZE); torch.compile's generated reductions up to 64 KiB.
ROW_BUDGET_BY_CALL = {"triton": 4 * 65536, "compiled": 65536}
#: Host keys of the sources whose rows name none (LLMCompass's call+sync rows).
SOURCE_HOSTS = {"llmcompass": "llmcompass-host"}


def row_host(row: Measurement) -> str:
    """The key of the host profile ``row`` was timed on ("" when it names none)."""
    return row.host or SOURCE_HOSTS.get(row.source, "")


def measured_chip(
    row: Measurement, chip: chipsim.Chip, hosts: Mapping[str, HostProfile] | None = None
) -> chipsim.Chip:
    """``chip`` as ``row`` was measured on it: its GPU variant, its host, its kind of call.

    ``hosts`` maps host keys to profiles (see :mod:`chipsim.hw.host`); a row whose host is
    not there (or with no ``hosts``) keeps ``chip``'s own launch table, the host the chip was
    fitted with. A kernel-only row pays no host cost at all and no latency from host to GPU
    (the events bracket the GPU's work), only each kernel's start-up on the chip
    (``launch.kernel_gap_cycles``).
    """
    if row.variant in VARIANTS:
        chip = with_variant(chip, row.variant)
    key = row_host(row)
    if hosts is not None and key in hosts:
        chip = hosts[key].apply(chip)
    launch = chip.launch
    if row.call in WRAPPED_CALLS:  # the call enters its wrapper, then launches
        launch = dataclasses.replace(
            launch,
            eager_cycles=launch.compiled,
            library_cycles=launch.compiled,
            overlap_cycles=launch.compiled_overlap_cycles,
        )
    if row.method == "kernel":  # events on the GPU's stream: no host, no host-to-GPU latency
        launch = dataclasses.replace(
            launch,
            eager_cycles=1,
            library_cycles=1,
            compiled_cycles=1,
            overlap_cycles=0,
            compiled_overlap_cycles=0,
            sync_cycles=0,
            device_cycles=0,
        )
    chip = dataclasses.replace(chip, launch=launch)
    if row.call in ROW_BUDGET_BY_CALL and chip.sm.count:
        budget = ROW_BUDGET_BY_CALL[row.call]
        chip = dataclasses.replace(chip, sm=dataclasses.replace(chip.sm, row_budget_bytes=budget))
    return chip


def simulate_us(
    row: Measurement,
    chip: str | chipsim.Chip,
    *,
    synchronous: bool = False,
    hosts: Mapping[str, HostProfile] | None = None,
) -> float:
    """Simulated time of ``row``'s workload on ``chip`` in microseconds, timed the way the
    source timed it (``row.method``):

    * ``call+sync``: a warm-up call, a synchronisation, the timed call, a synchronisation;
      the host's clock between the two waits;
    * ``kernel``: the GPU's time for the call (CUDA events, a profiler): no host cost, the
      L2 cold (the benchmarks flush it, or stream operands larger than it);
    * ``harness``: a benchmark loop of back-to-back calls: per call, three calls minus one,
      halved (the host and the GPU overlap; the slower sets the pace).
    """
    chip = measured_chip(row, chipsim.chip(chip), hosts)
    fn = workload(row.op)
    dev = chipsim.device(chip, functional=False)
    dtype = getattr(chipsim, row.dtype)
    inputs = []
    for shape in row.shapes:
        ttype = chipsim.TensorType(shape, dtype)
        inputs.append(chipsim.Tensor(dev.upload(np.empty(0), ttype), ttype, dev))
    ops = ChipOps(dev, synchronous)

    def calls(n: int) -> int:
        outs = [fn(ops, *inputs) for _ in range(n)]
        del outs
        return synchronize(dev)

    with dev:
        if row.method == "kernel":
            start = synchronize(dev)
            end = calls(1)
            return (end - start) / chip.clock_hz * 1e6
        calls(1)  # warm-up call, as the measurements did
        start = synchronize(dev)
        one = calls(1)
        if row.method == "harness":
            three = calls(3)
            return ((three - one) - (one - start)) / 2 / chip.clock_hz * 1e6
        return (one - start) / chip.clock_hz * 1e6


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
    chip: str | chipsim.Chip,
    rows: Iterable[Measurement],
    *,
    synchronous: bool = False,
    hosts: Mapping[str, HostProfile] | None = None,
) -> Evaluation:
    """Simulate every row on ``chip`` and collect the errors (deterministic)."""
    chip = chipsim.chip(chip)
    results = tuple(
        Result(r, simulate_us(r, chip, synchronous=synchronous, hosts=hosts)) for r in rows
    )
    return Evaluation(chip.name, results)
