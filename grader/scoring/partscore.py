"""A part's score: its instances' credit, which of them count, and the explanation a learner
reads (in the learner's language).

A part's points come from the instances it *counts* (the hidden ones, when graded); the
others (the visible ones) are scored and shown as a preview. The points are the mean credit
of the part's *families* of instances, each family weighing the same, and a family's credit
is the mean over its instances: a family cheap to draw can be drawn often, to steady the
grade, without outweighing the others (:func:`~grader.scoring.credit.mean_credit`).

A part graded on a *benchmark* (the fusion challenge: the same graphs for every submission,
:mod:`grader.problems.parts`) also scores graphs drawn for the submission that *check* it: if
the pass earns more than :data:`CHECK_MARGIN` less credit on them than on the benchmark (or
gives an invalid answer there), the part is graded on them instead (:attr:`PartScore.checked`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chipsim.i18n import ENGLISH, current_language, tr, use_language
from grader.scoring.credit import (
    InstanceScore,
    by_family,
    formula,
    mean_credit,
    mean_fraction,
    points_for,
    show_points,
    shown_fraction,
)

#: An explanation lists at most this many counted instances one per line (the ones with the
#: least credit) and sums up the others in one line.
LISTED = 12
#: A benchmark's points stand unless the graphs drawn to check it earn this much less credit
#: (a fraction of full credit). An honest pass's credit on them differs from the benchmark's
#: by a standard deviation of about 0.06 (``benchmarks/README.md``), so this is about four of
#: them; a table of answers prepared for the benchmark has no answers for them.
CHECK_MARGIN = 0.25


@dataclass(frozen=True, slots=True)
class PartScore:
    """All instances of one part, and the part's points.

    ``language``: the language the messages were written in, and :meth:`explain` writes in
    (the learner's, see :func:`grader.scoring.grade.score_answer`). ``families``: each
    instance's family (:meth:`grader.problems.part.Part.families`); an instance not in it
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
        """Mean credit over the counted instances' families
        (:func:`~grader.scoring.credit.mean_credit`); 0 if any counted answer was invalid — a
        pass that returns an invalid answer for one graph is not a working pass."""
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
        lines += [f"  - {line}" for line in _lines(listed)]
        shown = {id(s) for s in listed}
        rest = [s.fraction for s in counted if id(s) not in shown]
        if rest and min(rest) >= 1:
            lines.append("  " + tr("the other {n}: full credit each", n=len(rest)))
        elif rest and shown_fraction(min(rest)) == shown_fraction(max(rest)):
            lines.append("  " + tr("the other {n}: {credit:.1%} credit each", n=len(rest),
                                   credit=shown_fraction(min(rest))))  # fmt: skip
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
                                  n=len(group), credit=shown_fraction(mean_fraction(group)))
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


def _lines(listed: Sequence[InstanceScore]) -> list[str]:
    """One line per instance, in order; instances with the same credit and the same message
    (one error raised on every graph) share one line.

    Example:
        >>> same = [InstanceScore(f"h{k}", 0.0, "NotImplementedError") for k in (1, 2, 3)]
        >>> _lines([InstanceScore("v", 0.5, "slow"), *same])
        ['v: 50.0% credit. slow', 'h1 and 2 more: 0.0% credit each. NotImplementedError']
    """
    groups: dict[tuple[float, str], list[InstanceScore]] = {}
    for s in listed:
        groups.setdefault((shown_fraction(s.fraction), s.message), []).append(s)
    return [
        _line(group[0]) if len(group) == 1 else
        tr("{instance} and {n} more: {fraction:.1%} credit each. {message}",
           instance=group[0].instance, n=len(group) - 1, fraction=fraction, message=message)
        for (fraction, message), group in groups.items()
    ]  # fmt: skip


def _line(s: InstanceScore) -> str:
    return tr("{instance}: {fraction:.1%} credit. {message}", instance=s.instance,
              fraction=shown_fraction(s.fraction), message=s.message)  # fmt: skip


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
