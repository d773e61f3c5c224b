"""Scoring: the partial-credit formula and the per-instance checks behind it.

Every timed instance is scored the same way (cycles, or arena bytes):

    credit = clip((naive - theirs) / (naive - reference), 0, 1)

full credit at or below the reference, none at or above the naive baseline, linear between.
An open challenge names a simple *baseline* too (greedy by size in the memory challenge): it
earns :data:`BASELINE_CREDIT`, and the line bends there (naive 0, baseline 0.5, reference 1),
so the simple answer earns half and the rest is for going beyond it. A part may grant full
credit within a *slack* of the reference (a fraction of it). An invalid answer (malformed,
overlapping live tensors, a non-convex partition, wrong numbers, another graph) scores 0
before any timing is looked at.

A part's points are the mean credit of its instances' *families*, each family weighing the
same (:func:`mean_credit`); :mod:`grader.scoring.partscore` keeps a part's instances, which
of them count, and the explanation a learner reads.

Example:
    >>> credit(theirs=150, reference=100, naive=200)
    0.5
    >>> credit(theirs=90, reference=100, naive=200), credit(theirs=250, reference=100, naive=200)
    (1.0, 0.0)
    >>> credit(theirs=150, reference=100, naive=200, baseline=150)  # the baseline earns half
    0.5
    >>> credit(theirs=125, reference=100, naive=200, baseline=150)
    0.75
    >>> points_for(0.3333, 2)
    0.666
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chipsim.i18n import tr

T = TypeVar("T")

#: Points are rounded *down* to this many decimals, so a score never exceeds the cell's points.
DECIMALS = 3
#: The credit an open challenge's baseline (its simple answer) earns.
BASELINE_CREDIT = 0.5


def credit(
    theirs: float,
    reference: float,
    naive: float,
    *,
    baseline: float | None = None,
    slack: float = 0.0,
) -> float:
    """The fraction of credit for a result ``theirs`` (smaller is better), in [0, 1].

    Full credit at or below ``reference * (1 + slack)``, none at or above ``naive``, linear
    between; with a ``baseline`` strictly between the two, the line bends there at
    :data:`BASELINE_CREDIT`. When the reference is no better than the naive baseline
    (``naive <= reference``), the instance cannot separate answers: matching the reference
    earns full credit, anything worse earns none.
    """
    full = reference * (1 + slack)
    piece = segment(theirs, reference, naive, baseline=baseline, slack=slack)
    if piece in ("full", "flat"):
        return 1.0 if piece == "full" else 0.0
    if piece == "line":
        return _clip((naive - theirs) / (naive - full))
    assert baseline is not None
    if piece == "lower":
        return BASELINE_CREDIT * _clip((naive - theirs) / (naive - baseline))
    return BASELINE_CREDIT + (1 - BASELINE_CREDIT) * _clip((baseline - theirs) / (baseline - full))


def segment(
    theirs: float,
    reference: float,
    naive: float,
    *,
    baseline: float | None = None,
    slack: float = 0.0,
) -> str:
    """The piece of :func:`credit`'s line that ``theirs`` falls on: ``"full"`` (at or below
    full credit), ``"flat"`` (the reference no better than naive: nothing to earn),
    ``"line"`` (naive to full credit, no bend), ``"lower"`` (naive to the baseline) or
    ``"upper"`` (the baseline to full credit). What an explanation says of a result
    comes from here, so it names the line its credit was read from.

    Example:
        >>> segment(125, 100, 200, baseline=150), segment(175, 100, 200, baseline=150)
        ('upper', 'lower')
        >>> segment(125, 100, 200, baseline=90)  # a baseline past full credit bends nothing
        'line'
    """
    full = reference * (1 + slack)
    if theirs <= full:
        return "full"
    if not separates(reference, naive, slack=slack):
        return "flat"
    if baseline is None or not full < baseline < naive:
        return "line"
    return "lower" if theirs >= baseline else "upper"


def separates(reference: float, naive: float, *, slack: float = 0.0) -> bool:
    """Whether an instance separates answers: its naive baseline is above full credit
    (otherwise every answer at or below the reference earns it all, the naive one too)."""
    return naive > reference * (1 + slack)


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def points_for(fraction: float, points: float) -> float:
    """``points * fraction`` rounded down to :data:`DECIMALS` places and clipped to [0, points].

    A plain Python float, as nbgrader's partial credit needs.
    """
    if not math.isfinite(fraction):
        return 0.0
    fraction = min(1.0, max(0.0, float(fraction)))
    scale = 10**DECIMALS
    value = math.floor(float(points) * fraction * scale + 1e-9) / scale
    return float(min(float(points), max(0.0, value)))


@dataclass(frozen=True, slots=True)
class InstanceScore:
    """The outcome of one instance of one part.

    Attributes:
        instance: the instance id.
        fraction: credit in [0, 1].
        message: one line saying why (the formula with numbers, or what was wrong).
        numbers: the measured numbers (theirs, reference, naive, lower_bound) when timed.
        picture: what to draw beside the reference's (``None`` for exact-answer parts).
        invalid: the answer was invalid (malformed, for another graph, overlapping, not
            convex, not numerically equivalent): the whole part then scores 0.
        matches_reference: the answer is exactly the reference's (the same partition or the
            same offsets), for the instructor's copy check.
    """

    instance: str
    fraction: float
    message: str
    numbers: dict[str, int] = field(default_factory=dict)
    picture: Any = field(default=None, compare=False, repr=False)
    invalid: bool = False
    matches_reference: bool = False


def formula(slack: float, baseline: str | None, overlap: bool) -> list[str]:
    """The credit line of a timed part, as the explanation states it (see :func:`credit`)."""
    if baseline and slack:
        line = tr("credit: 0 at naive, {half:.0%} at {name}, 100% at the full-credit line; "
                  "linear between ({name} earns full credit where it reaches that line itself)",
                  half=BASELINE_CREDIT, name=tr(baseline))  # fmt: skip
    elif baseline:
        line = tr("credit: 0 at naive, {half:.0%} at {name}, 100% at the reference; linear "
                  "between ({name} earns full credit where it matches the reference itself)",
                  half=BASELINE_CREDIT, name=tr(baseline))  # fmt: skip
    elif slack:
        line = tr("credit = clip((naive - yours) / (naive - full-credit line), 0, 1)")
    else:
        line = tr("credit = clip((naive - yours) / (naive - reference), 0, 1)")
    lines = [line]
    if slack:
        lines.append(tr("full-credit line = reference x {k:.2f} (within {slack:.0%} of it)",
                        k=1 + slack, slack=slack))  # fmt: skip
    if overlap:
        lines.append(tr("this part: half the credit from the cycles (the line above), half "
                        "from the DMA overlap (yours / the reference's; all of it at the "
                        "reference's cycles)"))  # fmt: skip
    return lines


def mean_credit(
    scores: tuple[InstanceScore, ...], families: Mapping[str, str] | None = None
) -> float:
    """Mean credit of ``scores``, each family weighing the same (a family's credit: the mean
    over its instances; ``families`` maps an instance to its family, and an instance not in
    it is a family of its own); 0 when there are none or one of them is invalid.

    Example (one family of three instances, another of one):
        >>> three = tuple(InstanceScore(f"a{i}", 0.5, "") for i in range(3))
        >>> mean_credit((*three, InstanceScore("b", 1.0, "")), {"a0": "a", "a1": "a", "a2": "a"})
        0.75
    """
    if not scores or any(s.invalid for s in scores):
        return 0.0
    groups = by_family(scores, families or {})
    return sum(mean_fraction(group) for group in groups.values()) / len(groups)


def by_family(
    scores: Iterable[InstanceScore], families: Mapping[str, str]
) -> dict[str, list[InstanceScore]]:
    """``scores`` grouped by family, in order of first appearance."""
    return grouped(((s.instance, s) for s in scores), families)


def grouped(items: Iterable[tuple[str, T]], families: Mapping[str, str]) -> dict[str, list[T]]:
    """``(instance id, value)`` pairs grouped by the instance's family (``families`` maps an
    instance to its family; an instance not in it is a family of its own), in order of first
    appearance.

    Example:
        >>> grouped([("a1", 1), ("b", 2), ("a2", 3)], {"a1": "a", "a2": "a"})
        {'a': [1, 3], 'b': [2]}
    """
    groups: dict[str, list[T]] = {}
    for instance, value in items:
        groups.setdefault(families.get(instance, instance), []).append(value)
    return groups


def mean_fraction(scores: list[InstanceScore]) -> float:
    """The mean credit of ``scores`` (one family's credit)."""
    return sum(s.fraction for s in scores) / len(scores)


def shown_fraction(fraction: float) -> float:
    """``fraction`` rounded down to a tenth of a percent, as every credit is shown (the
    explanation's lines and an instance's own message): a kind with one instance
    short of full credit among 200 shows 99.9%, not 100.0%, and an instance a few cycles
    short of the bend at half credit 49.9%, not 50.0%."""
    return math.floor(fraction * 1000 + 1e-9) / 1000


def show_points(points: float) -> str:
    """Points as the grade has them: up to :data:`DECIMALS` decimals, never rounded up
    (3.499 stays 3.499; 4.0 is 4).

    Example:
        >>> show_points(3.499), show_points(4.0), show_points(0.5)
        ('3.499', '4', '0.5')
    """
    text = f"{points_for(1.0, points) if points >= 0 else 0.0:.{DECIMALS}f}"
    return text.rstrip("0").rstrip(".")
