"""Leave-one-source-out validation: fit on every source but one, test on the one left out.

A model fitted to one source can match that source and still miss the next one (issue 25):
the number that predicts how ``datacenter-gpu`` does on data nobody has seen is its error on
a *whole source* the fit never saw, for each source in turn.

**The fit.** The GPU's shared parameters (:data:`GRID`: the latency from a host's launch to
the GPU; each kernel's start-up on the GPU, the floor of a kernel-only timing; the HBM's
sustained share; whether stores reach HBM at once; one SM's operand load rate and a block's
fixed cycles, which set tensor-core efficiency by tile and wave shape) are chosen on a grid:
every row is simulated once per grid point that reaches it (:func:`grid_times`, minutes; the
benchmark script stores the result), and each fold picks the point with the least mean
squared log error on the training sources (:func:`choose`, instant). Matmul rows are
simulated on the grid of :data:`MATMUL_PARAMS` with the HBM share at
:data:`MATMUL_DRAM_PCT`, the launch latency at :data:`MATMUL_DEVICE` and a write-back L2
(one kernel: its time barely moves with them); the others on the :data:`NON_MATMUL`
parameters.

**The host is measured, not predicted.** A host-bound row (call+sync, harness) depends on the
machine that ran it, which no other source saw. As ``python -m chipsim calibrate`` measures a
learner's own host, a held-out source's host is measured by its *probe* rows -- its smallest
row of each kind of call (:func:`probe_rows`) -- which are then left out of its score.

Example:
    >>> rows = [r for r in load_corpus() if r.source != "llmcompass"]
    >>> sorted({r.source for r in rows})[:2]
    ['apex-fastln', 'apex-rmsnorm']
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import chipsim
from chipsim.calibration.evaluate import Result, Summary, row_host, simulate_us
from chipsim.calibration.fit import with_fields
from chipsim.calibration.measurements import Measurement, load_corpus
from chipsim.hw import HostProfile, get_host

#: The shared GPU parameters and the values tried (chip fields).
GRID: dict[str, tuple[int, ...]] = {  # (bools are ints)
    "launch.device_cycles": (2820, 5640, 8460),  # 2, 4, 6 us from host launch to the GPU
    "launch.kernel_gap_cycles": (4230, 7050, 9870),  # 3, 5, 7 us: each kernel's start-up
    "dram.sustained_pct": (85, 100),
    # whether a kernel's stores reach HBM during it (1) or only when evicted (0)
    "l2.write_through": (False, True),
    "sm.operand_bytes_per_cycle": (32, 47),  # 47 = the L2's 5120 B/clk peak / 108 SMs
    "sm.block_fixed_cycles": (750, 1500),
}
MATMUL_DRAM_PCT = 85
#: A matmul row's host-to-GPU latency (the middle of the grid): a call+sync row's host probe
#: absorbs a change of it almost one for one, and a kernel row does not see it.
MATMUL_DEVICE = 5640
#: Only these parameters reach a row that is not a matmul.
NON_MATMUL = (
    "launch.device_cycles",
    "launch.kernel_gap_cycles",
    "dram.sustained_pct",
    "l2.write_through",
)
MATMUL_WRITE_THROUGH = False
MATMUL_PARAMS = (
    "launch.kernel_gap_cycles",
    "sm.operand_bytes_per_cycle",
    "sm.block_fixed_cycles",
)
RESULTS_JSON = Path(__file__).parent / "loso_results.json"

Point = tuple[tuple[str, int], ...]


def points(names: Sequence[str]) -> list[Point]:
    """Every combination of the grid values of ``names``."""
    return [
        tuple(zip(names, vs, strict=True)) for vs in itertools.product(*(GRID[n] for n in names))
    ]


def point_of(row: Measurement, full: Point) -> Point:
    """The part of a full grid point that reaches ``row``."""
    d = dict(full)
    if row.op == "matmul":
        return tuple((n, d[n]) for n in MATMUL_PARAMS)
    return tuple((n, d[n]) for n in NON_MATMUL)


def probe_rows(rows: Sequence[Measurement]) -> list[Measurement]:
    """A source's probes: for each (host, kind of call) of its host-bound rows, the row with the
    smallest measured time (the one that shows the host most and the GPU least)."""
    best: dict[tuple[str, str], Measurement] = {}
    for r in rows:
        if r.method != "kernel":
            key = (row_host(r), r.call)
            if key not in best or r.time_us < best[key].time_us:
                best[key] = r
    return list(best.values())


_KIND_FIELD = {"aten": "framework_us", "cublas": "library_us"}


def measure_host(
    probes: Sequence[Measurement], chip: chipsim.Chip, host: HostProfile
) -> HostProfile:
    """``host`` with each probed kind of call's dispatch set so that its probe row simulates
    to its measured time (two corrections: the dispatch adds to the time almost 1:1)."""
    for r in probes:
        field = _KIND_FIELD.get(r.call, "wrapper_us")
        for _ in range(2):
            sim = simulate_us(r, chip, hosts={row_host(r): host})
            value = max(0.5, getattr(host, field) + (r.time_us - sim))
            changes = {field: round(value, 2)}
            if field == "wrapper_us":  # the share after the launch keeps its proportion
                ratio = host.wrapper_overlap_us / host.wrapper_us if host.wrapper_us else 0.5
                changes["wrapper_overlap_us"] = round(value * ratio, 2)
            host = _replace(host, changes)
    return host


def _replace(host: HostProfile, changes: Mapping[str, object]) -> HostProfile:
    return dataclasses.replace(host, **changes)


def default_hosts(rows: Sequence[Measurement], chip: chipsim.Chip) -> dict[str, HostProfile]:
    """Every host of ``rows``, measured by its probes from the LLMCompass host as a start."""
    start = get_host("llmcompass-host")
    hosts: dict[str, HostProfile] = {}
    by_host: dict[str, list[Measurement]] = {}
    for r in probe_rows(rows):
        by_host.setdefault(row_host(r), []).append(r)
    for key, probes in sorted(by_host.items()):
        hosts[key] = measure_host(
            probes,
            chip,
            _replace(start, {"name": key, "description": "measured by its probe rows"}),
        )
    return hosts


def grid_times(
    rows: Sequence[Measurement],
    base: chipsim.Chip | str = "datacenter-gpu",
    progress: Callable[[str], None] = lambda s: None,
    reuse: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, dict[str, float]]:
    """Simulated time of every row at every grid point that reaches it:
    ``{point key: {row key: us}}`` (see :func:`row_key`, :func:`point_key`). Slow (minutes)."""
    base = chipsim.chip(base)
    out: dict[str, dict[str, float]] = {k: dict(v) for k, v in (reuse or {}).items()}
    for kind, names in (("matmul", list(MATMUL_PARAMS)), ("other", list(NON_MATMUL))):
        kind_rows = [r for r in rows if (r.op == "matmul") == (kind == "matmul")]
        for p in points(names):
            known = out.get(point_key(p), {})
            if all(row_key(r) in known for r in kind_rows):
                continue  # simulated before (``reuse``): the same chip, the same rows
            fields = dict(p)
            if kind == "matmul":
                fields["dram.sustained_pct"] = MATMUL_DRAM_PCT
                fields["launch.device_cycles"] = MATMUL_DEVICE
                fields["l2.write_through"] = MATMUL_WRITE_THROUGH
            chip = with_fields(base, fields)
            hosts = default_hosts(rows, chip)
            progress(f"{kind} {dict(p)}")
            times = out.setdefault(point_key(p), {})
            for r in kind_rows:
                times[row_key(r)] = simulate_us(r, chip, hosts=hosts)
    return out


def row_key(r: Measurement) -> str:
    return f"{r.source}|{r.where}|{r.op}|{r.call}|{r.shape_text}|{r.dtype}|{r.variant}"


def point_key(p: Point) -> str:
    return ",".join(f"{n}={v}" for n, v in p)


@dataclass(frozen=True)
class Fold:
    """One source held out: the point chosen on the others, and the held-out rows' results
    (probe rows apart: they measured the host)."""

    source: str
    point: Point
    train_loss: float
    results: tuple[Result, ...]
    probes: tuple[Measurement, ...]

    @property
    def summary(self) -> Summary:
        return Summary.of(self.results)


def _loss(times: Mapping[str, Mapping[str, float]], rows: Sequence[Measurement], p: Point) -> float:
    total = 0.0
    for r in rows:
        sim = times[point_key(point_of(r, p))][row_key(r)]
        total += math.log(sim / r.time_us) ** 2
    return total / max(len(rows), 1)


def choose(
    times: Mapping[str, Mapping[str, float]], rows: Sequence[Measurement]
) -> tuple[Point, float]:
    """The full grid point with the least mean squared log error on ``rows`` (ties: first)."""
    best = None
    for p in points(list(GRID)):
        loss = _loss(times, rows, p)
        if best is None or loss < best[1]:
            best = (p, loss)
    assert best is not None
    return best


def leave_one_source_out(
    rows: Sequence[Measurement], times: Mapping[str, Mapping[str, float]]
) -> list[Fold]:
    """For every source: choose on the others, report its rows (probes apart)."""
    folds = []
    for source in dict.fromkeys(r.source for r in rows):
        train = [r for r in rows if r.source != source]
        test = [r for r in rows if r.source == source]
        probes = probe_rows(test)
        point, loss = choose(times, train)
        results = tuple(
            Result(r, times[point_key(point_of(r, point))][row_key(r)])
            for r in test
            if r not in probes
        )
        folds.append(Fold(source, point, loss, results, tuple(probes)))
    return folds


def save_folds(folds: Sequence[Fold], all_point: Point, path: Path = RESULTS_JSON) -> None:
    """The chosen points (per fold, and on every source) as JSON, for the book to re-simulate."""
    data = {
        "grid": {k: list(v) for k, v in GRID.items()},
        "all_sources": dict(all_point),
        "folds": {f.source: dict(f.point) for f in folds},
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def load_folds(path: Path = RESULTS_JSON) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def replay(
    rows: Sequence[Measurement] | None = None,
    saved: Mapping | None = None,
    base: chipsim.Chip | str = "datacenter-gpu",
) -> list[Fold]:
    """Re-simulate every held-out source at its stored fold point (seconds, not minutes):
    the book's numbers, computed at build time from the stored choices."""
    rows = list(rows) if rows is not None else load_corpus()
    saved = saved if saved is not None else load_folds()
    base = chipsim.chip(base)
    folds = []
    chips: dict[Point, tuple[chipsim.Chip, dict[str, HostProfile]]] = {}
    for source, fields in saved["folds"].items():
        test = [r for r in rows if r.source == source]
        probes = probe_rows(test)
        full = tuple((n, fields[n]) for n in GRID)
        results = []
        for r in test:
            if r in probes:
                continue
            sub = point_of(r, full)
            if sub not in chips:
                f = dict(sub)
                if r.op == "matmul":
                    f["dram.sustained_pct"] = MATMUL_DRAM_PCT
                    f["launch.device_cycles"] = MATMUL_DEVICE
                    f["l2.write_through"] = MATMUL_WRITE_THROUGH
                chip = with_fields(base, f)
                chips[sub] = (chip, default_hosts(rows, chip))
            chip, hosts = chips[sub]
            results.append(Result(r, simulate_us(r, chip, hosts=hosts)))
        folds.append(Fold(source, full, math.nan, tuple(results), tuple(probes)))
    return folds
