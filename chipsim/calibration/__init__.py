"""Calibration: how far chipsim's times are from measured hardware, and fitting a chip to it.

* :mod:`~chipsim.calibration.measurements` — measured rows with citations (the published
  A100 set ships in ``a100_measured.csv``, its sources in ``sources.csv``);
* :mod:`~chipsim.calibration.evaluate` — simulate each row as it was measured and report
  per-row error, MAPE and per-class geometric-mean ratio, for fit and held-out rows;
* :mod:`~chipsim.calibration.fit` — a small deterministic fit of a few chip fields;
* :mod:`~chipsim.calibration.host` — measure this machine with numpy and write a calibrated
  ``cpu-simd`` chip (``python -m chipsim calibrate``).

This room drives chipsim through its public API only, like the grader: it never reaches into
the code generator or the simulator's internals.
"""

from chipsim.calibration.evaluate import Evaluation, Result, Summary, evaluate, simulate_us
from chipsim.calibration.fit import FitResult, Param, fit_chip, minimize, with_fields
from chipsim.calibration.measurements import (
    Measurement,
    load_corpus,
    load_measurements,
    load_sources,
    read_measurements,
    split,
    write_measurements,
)

__all__ = [
    "Evaluation",
    "Result",
    "Summary",
    "evaluate",
    "simulate_us",
    "FitResult",
    "Param",
    "fit_chip",
    "minimize",
    "with_fields",
    "Measurement",
    "load_corpus",
    "load_measurements",
    "load_sources",
    "read_measurements",
    "split",
    "write_measurements",
]
