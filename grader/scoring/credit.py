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

A part's points come from the instances it *counts* (the hidden ones, when graded); the
others (the visible ones) are scored and shown as a preview. The points are the mean credit
of the part's *families* of instances, each family weighing the same, and a family's credit
is the mean over its instances: a family cheap to draw can be drawn often, to steady the
grade, without outweighing the others (:func:`mean_credit`).

A part graded on a *benchmark* (the fusion challenge: the same graphs for every submission,
:mod:`grader.problems.parts`) also scores graphs drawn for the submission that *check* it: if
the pass earns more than :data:`CHECK_MARGIN` less credit on them than on the benchmark (or
gives an invalid answer there), the part is graded on them instead (:attr:`PartScore.checked`).

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

from chipsim.i18n import ENGLISH, current_language, tr, use_language

T = TypeVar("T")

#: Points are rounded *down* to this many decimals, so a score never exceeds the cell's points.
DECIMALS = 3
#: The credit an open challenge's baseline (its simple answer) earns.
BASELINE_CREDIT = 0.5
#: An explanation lists at most this many counted instances one per line (the ones with the
#: least credit) and sums up the others in one line.
LISTED = 12
#: A benchmark's points stand unless the graphs drawn to check it earn this much less credit
#: (a fraction of full credit). An honest pass's credit on them differs from the benchmark's
#: by a standard deviation of about 0.06 (``benchmarks/README.md``), so this is about four of
#: them; a table of answers prepared for the benchmark has no answers for them.
CHECK_MARGIN = 0.25


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


@dataclass(frozen=True, slots=True)
class PartScore:
    """All instances of one part, and the part's points.

    ``language``: the language the messages were written in, and :meth:`explain` writes in
    (the learner's, see :func:`grader.scoring.grade.score_answer`). ``families``: each
    instance's family (:meth:`grader.problems.parts.Part.families`); an instance not in it
    is a family of its own.
    """

    part: str
    points: float
    instances: tuple[InstanceScore, ...]
    notes: tuple[str, ...] = ()
    language: str = field(default_factory=lambda: feedback_language())
    counted: tuple[str, ...] | None = None
    #: the part's credit line, for the formula the explanation states: its slack, its
    #: baseline's title (English, :func:`~grader.problems.parts.strategy_title`; shown
    #: translated), and whether half the credit is the DMA overlap
    slack: float = 0.0
    baseline: str | None = None
    overlap: bool = False
    families: Mapping[str, str] = field(default_factory=dict)
    #: why every instance scored 0, when one reason did it (:func:`zero`: no answer, a cell
    #: out of time, tampering): the explanation says it once, and claims nothing per instance
    whole: str = ""
    #: the instances drawn to check a benchmark (the others in ``counted`` are its graphs):
    #: counted instead of it when the pass does much worse on them (:attr:`failed_check`)
    checked: tuple[str, ...] = ()

    def counted_scores(self) -> tuple[InstanceScore, ...]:
        """The instances the points come from: ``counted`` (all of them when it is None) but
        the checks, or the checks alone when the pass failed them (:attr:`failed_check`)."""
        return self.check_scores() if self.failed_check else self.graded_scores()

    def graded_scores(self) -> tuple[InstanceScore, ...]:
        """The instances the points come from unless the pass failed a check: ``counted``
        (all of them when it is None) but the checks (on a benchmark part: the benchmark)."""
        return tuple(
            s
            for s in self.instances
            if s.instance not in self.checked
            and (self.counted is None or s.instance in self.counted)
        )

    def check_scores(self) -> tuple[InstanceScore, ...]:
        """The instances drawn to check a benchmark (none on most parts)."""
        return tuple(s for s in self.instances if s.instance in self.checked)

    def preview_scores(self) -> tuple[InstanceScore, ...]:
        """The instances scored only to show (the visible ones, when graded)."""
        graded = {s.instance for s in (*self.graded_scores(), *self.check_scores())}
        return tuple(s for s in self.instances if s.instance not in graded)

    @property
    def failed_check(self) -> bool:
        """The pass earns more than :data:`CHECK_MARGIN` less credit on the graphs drawn to
        check the benchmark than on the benchmark, or an invalid answer there: the part is
        then graded on those graphs.

        Example (full credit on the benchmark, half on the drawn graphs):
            >>> bench = tuple(InstanceScore(f"b{i}", 1.0, "") for i in range(4))
            >>> drawn = (InstanceScore("h1", 0.5, ""),)
            >>> s = PartScore("p", 4, (*bench, *drawn), counted=("b0", "b1", "b2", "b3", "h1"),
            ...               checked=("h1",))
            >>> s.failed_check, s.score
            (True, 2.0)
        """
        checks = self.check_scores()
        if not checks:
            return False
        if any(s.invalid for s in checks):
            return True
        bench = mean_credit(self.graded_scores(), self.families)
        return mean_credit(checks, self.families) < bench - CHECK_MARGIN

    @property
    def fraction(self) -> float:
        """Mean credit over the counted instances' families (:func:`mean_credit`); 0 if any
        counted answer was invalid — a pass that returns an invalid answer for one graph is
        not a working pass."""
        return mean_credit(self.counted_scores(), self.families)

    @property
    def preview(self) -> float:
        """Points the preview instances alone would earn (what the test cell showed)."""
        return points_for(mean_credit(self.preview_scores(), self.families), self.points)

    @property
    def score(self) -> float:
        """Points earned: a plain float, rounded down, never above :attr:`points`."""
        return points_for(self.fraction, self.points)

    def explain(self) -> str:
        """The text shown in the graded cell and in the feedback, in :attr:`language`."""
        with use_language(self.language):
            return self._explain()

    def _explain(self) -> str:
        lines = [tr("Part {part}: {score} / {points} points", part=self.part,
                    score=show_points(self.score), points=show_points(self.points))]  # fmt: skip
        lines += [f"  {note}" for note in self.notes]
        if self.whole:
            return "\n".join([*lines, "  " + self.whole])
        counted, preview = self.counted_scores(), self.preview_scores()
        checks = self.check_scores()
        bench = mean_credit(self.graded_scores(), self.families)
        drawn = mean_credit(checks, self.families)
        if self.failed_check and any(s.invalid for s in checks):
            lines.append(
                "  "
                + tr(
                    "An answer on a graph drawn for this submission is invalid, so "
                    "the part is graded on the drawn graphs, not the benchmark."
                )
            )
        elif self.failed_check:
            lines.append("  " + tr("Your pass earns {drawn:.1%} credit on {n} graphs drawn for "
                                   "this submission and {bench:.1%} on the benchmark: more than "
                                   "{margin} percentage points less, so the part is graded on the "
                                   "drawn graphs, not the benchmark.", drawn=shown_fraction(drawn),
                                   n=len(checks), bench=shown_fraction(bench),
                                   margin=round(CHECK_MARGIN * 100)))  # fmt: skip
        source = (
            tr("those of the benchmark (the same for every submission)")
            if checks and not self.failed_check
            else tr("drawn for this submission")
        )
        if any(s.invalid for s in counted):
            lines.append(
                "  " + tr("An answer below is invalid, so the whole part scores 0: fix that first.")
            )
        listed = least_credit(counted)
        short = tuple(s for s in listed if s.invalid or s.fraction < 1)
        if preview and len(listed) < len(counted) and not short:
            lines.append("  " + tr("Graded on {n} hidden instances, {source}, every one at full "
                                   "credit; {k} of them:", n=len(counted), source=source,
                                   k=len(listed)))  # fmt: skip
        elif preview and len(listed) < len(counted) and len(short) < len(listed):
            listed = short  # the full ones are summed up below, not listed as if they lost
            lines.append("  " + tr("Graded on {n} hidden instances, {source}; {k} below full "
                                   "credit:", n=len(counted), source=source,
                                   k=len(listed)))  # fmt: skip
        elif preview and len(listed) < len(counted):
            lines.append("  " + tr("Graded on {n} hidden instances, {source}; the {k} with the "
                                   "least credit:", n=len(counted), source=source,
                                   k=len(listed)))  # fmt: skip
        elif preview and len(counted) == 1:
            lines.append("  " + tr("Graded on one hidden instance, {source}:", source=source))
        elif preview:
            lines.append("  " + tr("Graded on {n} hidden instances, {source}:", n=len(counted),
                                   source=source))  # fmt: skip
        lines += [f"  - {_line(s)}" for s in listed]
        shown = {id(s) for s in listed}
        rest = [s.fraction for s in counted if id(s) not in shown]
        if rest and min(rest) >= 1:
            lines.append("  " + tr("the other {n}: full credit each", n=len(rest)))
        elif rest:
            low, high = shown_fraction(min(rest)), shown_fraction(max(rest))
            lines.append("  " + tr("the other {n}: {low:.1%} to {high:.1%} credit each, {full} "
                                   "of them full credit", n=len(rest), low=low, high=high,
                                   full=sum(f >= 1 for f in rest)))  # fmt: skip
        groups = by_family(counted, self.families)
        if 1 < len(groups) < len(counted) and not any(s.invalid for s in counted):
            lines.append("  " + tr("Each kind of hidden instance weighs the same in the points "
                                   "(its credit: the mean over its instances):"))  # fmt: skip
            lines += ["  - " + tr("{kind}…: {n} instances, {credit:.1%} credit", kind=name,
                                  n=len(group), credit=shown_fraction(_mean(group)))
                      for name, group in groups.items()]  # fmt: skip
        if checks and not self.failed_check:
            lines.append("  " + tr("Checked on {n} graphs drawn for this submission: {drawn:.1%} "
                                   "credit, against {bench:.1%} on the benchmark (the drawn graphs "
                                   "are graded instead only when they earn more than {margin} "
                                   "percentage points less).", n=len(checks),
                                   drawn=shown_fraction(drawn), bench=shown_fraction(bench),
                                   margin=round(CHECK_MARGIN * 100)))  # fmt: skip
        if preview:
            lines.append("  " + tr("Visible instances (practice, not counted; your test cell "
                                   "scores them the same way): {points} points there:",
                                   points=show_points(self.preview)))  # fmt: skip
            lines += [f"  - {_line(s)}" for s in preview]
        if any(s.numbers for s in self.instances):
            lines += ["  " + line for line in formula(self.slack, self.baseline, self.overlap)]
        if any("lower_bound" in s.numbers for s in self.instances):
            lines.append(
                "  " + tr("lower bound = peak live bytes: no plan can have a smaller arena")
            )
        return "\n".join(lines)


def least_credit(scores: tuple[InstanceScore, ...]) -> tuple[InstanceScore, ...]:
    """The instances an explanation lists one per line: all of them up to :data:`LISTED`;
    past it, the :data:`LISTED` with the least credit (invalid ones first), worst first, so
    a part with a hundred instances shows where it lost its points and sums up the rest.

    Example:
        >>> many = tuple(InstanceScore(f"h{i}", i / 20, "") for i in range(20))
        >>> [s.instance for s in least_credit(many)][:3], len(least_credit(many[:5]))
        (['h0', 'h1', 'h2'], 5)
    """
    if len(scores) <= LISTED:
        return scores
    order = sorted(range(len(scores)), key=lambda i: (not scores[i].invalid, scores[i].fraction, i))
    return tuple(scores[i] for i in order[:LISTED])


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


def _line(s: InstanceScore) -> str:
    return tr("{instance}: {fraction:.1%} credit. {message}", instance=s.instance,
              fraction=shown_fraction(s.fraction), message=s.message)  # fmt: skip


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
    return sum(_mean(group) for group in groups.values()) / len(groups)


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


def _mean(scores: list[InstanceScore]) -> float:
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


def feedback_language() -> str:
    """The language of feedback written now; English when ``CHIPSIM_LANG`` names none."""
    try:
        return current_language()
    except ValueError:
        return ENGLISH


def zero(part: str, points: float, why: str, instances: tuple[str, ...]) -> PartScore:
    """A part scored 0 on every instance for one reason (no answer, tampering, ...), which
    its explanation states once.

    Example:
        >>> print(zero("fusion_chains", 3, "no answer found", ("v1", "h1", "h2")).explain())
        Part fusion_chains: 0 / 3 points
          no answer found
    """
    return PartScore(part, points, tuple(InstanceScore(i, 0.0, why) for i in instances),
                     whole=why)  # fmt: skip
