"""Scoring: the partial-credit formula and the per-instance checks behind it.

Every timed instance is scored the same way (cycles, or arena bytes):

    credit = clip((naive - theirs) / (naive - reference), 0, 1)

full credit at or below the reference, none at or above the naive baseline, linear between.
An invalid answer (malformed, overlapping live tensors, a non-convex partition, wrong
numbers, another graph) scores 0 before any timing is looked at.

Example:
    >>> credit(theirs=150, reference=100, naive=200)
    0.5
    >>> credit(theirs=90, reference=100, naive=200), credit(theirs=250, reference=100, naive=200)
    (1.0, 0.0)
    >>> points_for(0.3333, 2)
    0.666
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from chipsim.i18n import ENGLISH, current_language, tr, use_language

#: Points are rounded *down* to this many decimals, so a score never exceeds the cell's points.
DECIMALS = 3


def credit(theirs: float, reference: float, naive: float) -> float:
    """The fraction of credit for a result ``theirs`` (smaller is better), in [0, 1].

    When the reference is no better than the naive baseline (``naive <= reference``), the
    instance cannot separate answers: matching the reference earns full credit, anything
    worse earns none.
    """
    if theirs <= reference:
        return 1.0
    if naive <= reference:
        return 0.0
    return min(1.0, max(0.0, (naive - theirs) / (naive - reference)))


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
    """

    instance: str
    fraction: float
    message: str
    numbers: dict[str, int] = field(default_factory=dict)
    picture: Any = field(default=None, compare=False, repr=False)
    invalid: bool = False


@dataclass(frozen=True, slots=True)
class PartScore:
    """All instances of one part, and the part's points.

    ``language``: the language the messages were written in, and :meth:`explain` writes in
    (the learner's, see :func:`chipsim.grading.grade.score_answer`).
    """

    part: str
    points: float
    instances: tuple[InstanceScore, ...]
    notes: tuple[str, ...] = ()
    language: str = field(default_factory=lambda: feedback_language())

    @property
    def fraction(self) -> float:
        """Mean credit over the instances (each instance weighs the same); 0 if any answer
        was invalid — a pass that returns an invalid answer for one graph (say, a hard-coded
        answer for a visible graph) is not a working pass."""
        if not self.instances or any(s.invalid for s in self.instances):
            return 0.0
        return sum(s.fraction for s in self.instances) / len(self.instances)

    @property
    def score(self) -> float:
        """Points earned: a plain float, rounded down, never above :attr:`points`."""
        return points_for(self.fraction, self.points)

    def explain(self) -> str:
        """The text shown in the graded cell and in the feedback, in :attr:`language`."""
        with use_language(self.language):
            return self._explain()

    def _explain(self) -> str:
        score, points = self.score, self.points
        lines = [tr("Part {part}: {score:g} / {points:g} points", part=self.part, score=score,
                    points=points)]  # fmt: skip
        lines += [f"  {note}" for note in self.notes]
        if any(s.invalid for s in self.instances):
            lines.append(
                "  " + tr("An answer below is invalid, so the whole part scores 0: fix that first.")
            )
        for s in self.instances:
            line = tr("{instance}: {fraction:.1%} credit. {message}", instance=s.instance,
                      fraction=s.fraction, message=s.message)  # fmt: skip
            lines.append(f"  - {line}")
        if any(s.numbers for s in self.instances):
            lines.append("  " + tr("credit = clip((naive - theirs) / (naive - reference), 0, 1)"))
        if any("lower_bound" in s.numbers for s in self.instances):
            lines.append(
                "  " + tr("lower bound = peak live bytes: no plan can have a smaller arena")
            )
        return "\n".join(lines)


def feedback_language() -> str:
    """The language of feedback written now; English when ``CHIPSIM_LANG`` names none."""
    try:
        return current_language()
    except ValueError:
        return ENGLISH


def zero(part: str, points: float, why: str, instances: tuple[str, ...]) -> PartScore:
    """A part scored 0 on every instance for one reason (no answer, tampering, ...)."""
    return PartScore(part, points, tuple(InstanceScore(i, 0.0, why) for i in instances))
