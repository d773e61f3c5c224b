"""Time this machine with numpy: the measurements ``python -m chipsim calibrate`` fits to.

Three things decide how long numpy takes on a CPU core, and each has calibration workloads
that it dominates:

* the **per-call overhead** (Python, numpy dispatch, allocating the result): ``add`` on one
  element;
* the **streaming bandwidth** from DRAM: ``add`` on arrays of 4 and 16 MiB (beyond a core's
  L2);
* the **cache bandwidth**: ``add`` on arrays of 128 KiB, which stay in the core's L2 from one
  call to the next (its size is read from the machine, :func:`core_l2_bytes`);
* the **vector rate** of work that stays in cache: ``exp`` on 64 Ki elements (256 KiB);
* the **matrix-multiply rate** of numpy's BLAS: square ``matmul`` of 128, 256 and 512.

Held-out workloads the fit never sees (elementwise chains, softmax, matmuls of other
shapes) then show how well the fitted model predicts.

Each workload is timed as the best of several calls after a warm-up: the least disturbed
by whatever else the machine is doing, which is what a model of the machine predicts. The
timing runs in a fresh Python process with its BLAS limited to one thread (``cpu-simd``
models one core; a multi-threaded BLAS on a busy machine stalls waiting for its threads),
and hands its rows back as CSV.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from chipsim.calibration.measurements import (
    Measurement,
    format_shapes,
    read_measurements,
    write_measurements,
)
from chipsim.calibration.workloads import NUMPY, workload
from chipsim.errors import ChipsimError

MiB = 2**20
Shapes = tuple[tuple[int, ...], ...]
Plan = Sequence[tuple[str, Shapes]]

CALIBRATION: tuple[tuple[str, Shapes], ...] = (
    ("add", ((1,), (1,))),  # per-call overhead
    ("add", ((MiB,), (MiB,))),  # bandwidth: 4 MiB per f32 array (in cache on many CPUs)
    ("add", ((4 * MiB,), (4 * MiB,))),  # ... and 16 MiB (beyond most caches)
    ("add", ((2**15,), (2**15,))),  # L2 bandwidth: 128 KiB per array (in a core's L2)
    ("exp", ((2**16,),)),  # vector rate, in cache
    ("matmul", ((128, 128), (128, 128))),  # BLAS rate
    ("matmul", ((256, 256), (256, 256))),
    ("matmul", ((512, 512), (512, 512))),
)
"""The workloads the chip is fitted to, each dominated by one parameter."""

HELDOUT: tuple[tuple[str, Shapes], ...] = (
    ("chain", ((2**12,),)),  # relu((x + 1) * 2): three eager calls
    ("chain", ((2**16,),)),
    ("chain", ((2**20,),)),
    ("chain", ((2**22,),)),
    ("softmax_composed", ((64, 1024),)),  # max, sub, exp, sum, div
    ("softmax_composed", ((512, 1024),)),
    ("softmax_composed", ((1024, 4096),)),
    ("matmul", ((128, 256), (256, 512))),
    ("matmul", ((384, 768), (768, 768))),
    ("matmul", ((1024, 256), (256, 1024))),
    ("matmul", ((1024, 1024), (1024, 1024))),
)
"""Workloads the fit never sees: the calibration's report card."""

QUICK = {
    "fit": (CALIBRATION[0], CALIBRATION[1], CALIBRATION[3], CALIBRATION[4], CALIBRATION[6]),
    "heldout": (HELDOUT[1], HELDOUT[4], HELDOUT[7]),
}
"""A five-plus-three subset with short timings (``calibrate --quick``), for smoke tests."""

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def machine_description() -> str:
    """One line naming this machine: CPU model, CPUs, Python and numpy versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu} ({platform.machine()}, {os.cpu_count()} CPUs), Python "
        f"{platform.python_version()}, numpy {np.__version__}"
    )


def core_l2_bytes(default: int = MiB) -> int:
    """The size of one core's level-2 cache, from Linux's ``/sys`` (``default`` where it
    cannot be read: another OS, a container without ``/sys``)."""
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in sorted(root.glob("index*")):
            kind = (index / "type").read_text().strip()
            if (index / "level").read_text().strip() == "2" and kind in ("Data", "Unified"):
                return _size_bytes((index / "size").read_text().strip()) or default
    except (OSError, ValueError):
        pass
    return default


def _size_bytes(text: str) -> int:
    """``"2048K"`` -> 2097152 (sysfs writes sizes with a K or M suffix)."""
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:].upper(), 1)
    return int(text.rstrip("KkMmGg")) * scale


def time_numpy(
    name: str,
    shapes: Shapes,
    *,
    min_seconds: float = 0.05,
    min_calls: int = 5,
    max_calls: int = 2000,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, int]:
    """Best seconds of one call of workload ``name`` on f32 arrays, and the calls timed.

    One warm-up call first (as the A100 measurements did), then calls until ``min_seconds``
    have passed and at least ``min_calls`` ran; the fastest call counts.
    """
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    fn = workload(name)
    fn(NUMPY, *arrays)
    times: list[float] = []
    spent = 0.0
    while len(times) < max_calls and (len(times) < min_calls or spent < min_seconds):
        start = clock()
        fn(NUMPY, *arrays)
        times.append(clock() - start)
        spent += times[-1]
    return min(times), len(times)


class ProgressBar:
    """``[#####-----] 3/10 label`` redrawn in place on a terminal; silent otherwise."""

    def __init__(self, total: int, stream: TextIO = sys.stderr, width: int = 24) -> None:
        self.total, self.stream, self.width, self.done = total, stream, width, 0
        self.tty = stream.isatty()

    def __call__(self, label: str) -> None:
        if self.tty:
            filled = self.width * self.done // max(self.total, 1)
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {self.done + 1}/{self.total} {label:<40.40}")
            self.stream.flush()
        self.done += 1

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r" + " " * (self.width + 50) + "\r")
            self.stream.flush()


def measure(
    plan: Plan,
    which: str,
    progress: Callable[[str], None] = lambda label: None,
    **timing: float,
) -> list[Measurement]:
    """Time every workload of ``plan`` with numpy, in this process; rows of set ``which``."""
    machine = machine_description()
    rows = []
    for name, shapes in plan:
        progress(f"{name} {format_shapes(shapes)}")
        seconds, calls = time_numpy(name, shapes, **timing)
        rows.append(
            Measurement(
                op=name,
                family=f"{which}-{name}",
                shapes=shapes,
                dtype="f32",
                time_us=seconds * 1e6,
                call="numpy",
                published=f"{seconds * 1e6:.4g} us",
                derivation="as measured",
                timed=f"numpy call, perf_counter, best of {calls} after 1 warm-up",
                source="this-machine",
                where=machine,
                set=which,
            )
        )
    return rows


def measure_host(
    quick: bool = False, threads: int = 1, *, progress: bool = True
) -> list[Measurement]:
    """Time the calibration and held-out plans in a fresh process with ``threads`` BLAS
    threads (0: the library's default); the fit rows first, then the held-out ones.
    ``progress=False`` hides the progress bar (a notebook cell, where stderr is a warning).

    Raises:
        ChipsimError: the timing process failed (its error output is in the message).
    """
    env = dict(os.environ)
    for var in THREAD_VARIABLES:
        if threads > 0:
            env[var] = str(threads)
    args = [
        sys.executable,
        "-m",
        "chipsim.calibration.host_timing",
        *(["--quick"] if quick else []),
    ]
    err = None if progress else subprocess.PIPE
    proc = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    if proc.returncode != 0:
        detail = f": {proc.stderr.strip()[-2000:]}" if proc.stderr else "; see above"
        raise ChipsimError(f"timing this machine failed (exit code {proc.returncode}){detail}")
    return read_measurements(proc.stdout, "the timing process")


def _main(argv: Sequence[str]) -> int:
    """The timing process: measure, draw the progress bar on stderr, print CSV rows."""
    parser = argparse.ArgumentParser(prog="python -m chipsim.calibration.host_timing")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    fit, held = (QUICK["fit"], QUICK["heldout"]) if args.quick else (CALIBRATION, HELDOUT)
    timing = {"min_seconds": 0.01, "min_calls": 3} if args.quick else {}
    bar = ProgressBar(len(fit) + len(held))
    rows = measure(fit, "fit", bar, **timing) + measure(held, "heldout", bar, **timing)
    bar.close()
    sys.stdout.write(write_measurements(rows))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
