"""Fit a handful of a chip's integer fields to measured times, deterministically.

The residual of a row is ``log(simulated / measured)``: being 2x too slow costs what being
2x too fast costs, and a row of 10 us weighs what a row of 10 ms weighs. The fit minimises
the mean squared residual over the logarithms of the parameters by Levenberg-Marquardt
(damped Gauss-Newton): each step measures how every residual moves when one parameter
grows by 5% (one simulation per parameter; a parameter hidden behind another bottleneck is
probed with larger steps until the residuals move), solves the small normal equations and
keeps the step only if the loss falls. Values are integers (chip fields are), the arithmetic is
plain Python floats in a fixed order: no randomness, no wall clock, the same answer for
the same measurements.

A :class:`Param` may tie several fields to one value (a DRAM and the DMA engines that
stream from it share a bandwidth, for instance).

Example:
    >>> import math
    >>> from chipsim.calibration.fit import Param, minimize
    >>> p = Param(("launch.eager_cycles",), 10, 100_000)
    >>> minimize(lambda v: [math.log(v["launch.eager_cycles"] / 4321)], [p], {}).values
    {'launch.eager_cycles': 4321}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import chipsim
from chipsim.calibration.evaluate import simulate_us
from chipsim.calibration.measurements import Measurement
from chipsim.errors import ChipConfigError

Residuals = Callable[[dict[str, int]], Sequence[float]]


@dataclass(frozen=True, slots=True)
class Param:
    """A free integer parameter in ``[lo, hi]``: the chip fields (``"dram.bytes_per_cycle"``)
    that all take its value."""

    fields: tuple[str, ...]
    lo: int
    hi: int

    def __post_init__(self) -> None:
        if not self.fields or not 1 <= self.lo <= self.hi:
            raise ValueError(f"Param{self.fields}: need fields and 1 <= lo <= hi")

    @property
    def name(self) -> str:
        return self.fields[0]


@dataclass(frozen=True)
class FitResult:
    """The best values found, their loss (mean squared residual) and the points evaluated."""

    values: dict[str, int]
    loss: float
    evaluations: int
    chip: chipsim.Chip | None = None


def with_fields(chip: chipsim.Chip, values: Mapping[str, object]) -> chipsim.Chip:
    """A copy of ``chip`` with dotted fields replaced (``{"launch.eager_cycles": 9000}``).

    The result is checked like a chip file (:meth:`Chip.from_dict`), so a wrong field name
    or value raises :class:`ChipConfigError` naming it.
    """
    data = chip.to_dict()
    for path, value in values.items():
        section, _, key = path.rpartition(".")
        table = data.get(section) if section else data
        if not isinstance(table, dict) or key not in table:
            raise ChipConfigError(f"chip {chip.name!r} has no field {path!r}")
        table[key] = value
    return chipsim.Chip.from_dict(data, f"{chip.name} with {dict(values)}")


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve the small symmetric system ``a x = b`` (Gaussian elimination, partial pivoting)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if m[col][col] == 0.0:
            continue  # a parameter no residual depends on: it stays where it is
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        if m[r][r] != 0.0:
            x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _slope(
    res: Callable[[tuple[int, ...]], list[float]],
    key: tuple[int, ...],
    j: int,
    param: Param,
    r0: list[float],
) -> list[float]:
    """d residuals / d log(value j): a 5% step, or, where that changes nothing (the value
    hides behind another bottleneck, e.g. a compute rate under a memory-bound time), steps
    of 8x, 64x, ... both ways until the residuals move."""
    v = key[j]
    for factor in (1.05, 8.0, 64.0, 512.0, 4096.0):
        for target in (v * factor, v / factor):
            w = min(max(round(target), param.lo), param.hi)
            if w == v:
                continue
            rj = res(key[:j] + (w,) + key[j + 1 :])
            if rj != r0:
                step = math.log(w / v)
                return [(a - b) / step for a, b in zip(rj, r0, strict=True)]
    return [0.0] * len(r0)


def minimize(
    residuals: Residuals,
    params: Sequence[Param],
    start: Mapping[str, int],
    *,
    max_iterations: int = 30,
    rel_tol: float = 1e-3,
) -> FitResult:
    """Levenberg-Marquardt over ``log(value)`` of ``params``, from ``start`` (missing:
    the geometric middle of the range); stops when no value moves by more than ``rel_tol``.
    """
    names = [p.name for p in params]
    lo = [math.log(p.lo) for p in params]
    hi = [math.log(p.hi) for p in params]
    cache: dict[tuple[int, ...], list[float]] = {}

    def ints(theta: Sequence[float]) -> tuple[int, ...]:
        return tuple(
            min(max(round(math.exp(t)), p.lo), p.hi) for t, p in zip(theta, params, strict=True)
        )

    def res(key: tuple[int, ...]) -> list[float]:
        if key not in cache:
            cache[key] = [float(r) for r in residuals(dict(zip(names, key, strict=True)))]
        return cache[key]

    def loss(key: tuple[int, ...]) -> float:
        r = res(key)
        return sum(x * x for x in r) / len(r)

    key = tuple(
        min(max(int(start.get(p.name, math.isqrt(p.lo * p.hi))), p.lo), p.hi) for p in params
    )
    theta = [math.log(v) for v in key]
    damping = 1e-3
    for _ in range(max_iterations):
        r0 = res(key)
        jac = [_slope(res, key, j, params[j], r0) for j in range(len(key))]
        jtj = [[sum(a * b for a, b in zip(ji, jk, strict=True)) for jk in jac] for ji in jac]
        jtr = [-sum(a * b for a, b in zip(ji, r0, strict=True)) for ji in jac]
        moved = False
        while damping < 1e6:
            a = [
                [jtj[i][k] + (damping * jtj[i][i] if i == k else 0.0) for k in range(len(jac))]
                for i in range(len(jac))
            ]
            delta = _solve(a, jtr)
            trial = [
                min(max(t + d, l_), h) for t, d, l_, h in zip(theta, delta, lo, hi, strict=True)
            ]
            new = ints(trial)
            if new != key and loss(new) < loss(key):
                moved = max(abs(math.log(n / o)) for n, o in zip(new, key, strict=True)) > rel_tol
                theta, key = [math.log(v) for v in new], new
                damping = max(damping / 3, 1e-9)
                break
            damping *= 4
        if not moved:
            break
    return FitResult(dict(zip(names, key, strict=True)), loss(key), len(cache))


def expand(params: Sequence[Param], values: Mapping[str, int]) -> dict[str, int]:
    """Every field of every parameter with its value (tied fields get the same one)."""
    return {f: values[p.name] for p in params for f in p.fields}


def fit_chip(
    chip: str | chipsim.Chip,
    params: Sequence[Param],
    rows: Sequence[Measurement],
    *,
    synchronous: bool = False,
    rel_tol: float = 1e-3,
) -> FitResult:
    """Fit ``params`` of ``chip`` to ``rows`` (use the fit set); returns the fitted chip too.

    Starts from the chip's own values. Deterministic: same chip and rows, same result.
    """
    chip = chipsim.chip(chip)
    if not rows:
        raise ValueError("fit_chip needs at least one measured row")
    data = chip.to_dict()
    start = {}
    for p in params:
        section, _, key = p.name.rpartition(".")
        start[p.name] = (data[section] if section else data)[key]

    def residuals(values: dict[str, int]) -> list[float]:
        trial = with_fields(chip, expand(params, values))
        return [math.log(simulate_us(r, trial, synchronous=synchronous) / r.time_us) for r in rows]

    result = minimize(residuals, params, start, rel_tol=rel_tol)
    fitted = with_fields(chip, expand(params, result.values))
    return FitResult(result.values, result.loss, result.evaluations, fitted)
