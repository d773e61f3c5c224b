"""Will the graded cell cope? Its time and answer size, projected from the test cell.

The graded copy of a test cell runs the learner's function on every instance of the part,
hidden ones included, within the cell's time limit, and the grader refuses an answer past
its size cap; either way the part scores 0. The test cell, which sees only the visible
instances, projects both onto the graded cell and warns the learner first (Validate fails
the part where the graded cell would).

Time does not scale with the visible instances alone: a hidden family is drawn in several
sizes (*strata*), often larger than the visible instances, and a search's time grows faster
than an instance's size. So the test cell also times the learner's function on a
*practice draw* per size of each hidden family (:func:`practice_draws`): made like the hidden
instances, from public seeds (the installed package can draw *an* instance of every family,
never the ones a submission is graded on), timed and never scored.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import io
import time
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import Any

from chipsim.i18n import tr
from grader.problems.part import Part
from grader.sandbox.limits import CELL_SECONDS
from grader.scoring.answer import MAX_ANSWER_CHARS

#: Practice draws of a hidden family without a table of sizes (its instances are all drawn
#: alike; a few draws even out one slow draw).
PRACTICE_PER_FAMILY = 4
#: The practice draws' seeds are this plus their number: public, fixed, and of no use for
#: grading (a hidden instance's seed comes from the course's secret).
PRACTICE_SEED = 1_000_003


@dataclass(frozen=True, slots=True)
class PracticeDraw:
    """One practice draw: the problem, its kind, and how many hidden instances it stands for."""

    kind: str
    problem: Any
    weight: float


def practice_draws(part: Part) -> list[PracticeDraw]:
    """One draw from public seeds per row of sizes (stratum) of each family of ``part``'s
    hidden instances, standing for that family's instances of the row; a family without rows
    gets :data:`PRACTICE_PER_FAMILY` draws, each standing for an equal share of it.

    Example (four sizes of transformer block and four of CNN, 36 instances in all: the
    benchmark's 24 and the 12 drawn to check it):
        >>> from grader.problems.parts import get_part
        >>> draws = practice_draws(get_part("fusion_challenge"))
        >>> len(draws), sum(d.weight for d in draws)
        (8, 36.0)
    """
    return [dataclasses.replace(d, problem=copy.copy(d.problem)) for d in _drawn(part)]


@functools.lru_cache(maxsize=16)
def _drawn(part: Part) -> tuple[PracticeDraw, ...]:
    """The practice draws of ``part``, built once per process (building a challenge's takes
    seconds: each is redrawn until it leaves room to earn); :func:`practice_draws` hands out
    copies, so a function that sorts its records in place changes no later draw."""
    groups: dict[tuple[str, int | None], list] = {}
    for inst in part.hidden():
        groups.setdefault((inst.family or inst.id, inst.stratum), []).append(inst)
    draws = []
    for (_family, stratum), members in groups.items():
        chosen = members[:1] if stratum is not None else members[:PRACTICE_PER_FAMILY]
        for k, inst in enumerate(chosen):
            problem = dataclasses.replace(inst, seed=PRACTICE_SEED + k).build()
            draws.append(PracticeDraw(inst.kind, problem, len(members) / len(chosen)))
    return tuple(draws)


@dataclass(frozen=True, slots=True)
class Pace:
    """How long the learner's function took in the test cell.

    ``seconds`` on the ``ran`` visible instances; ``sampled`` on practice draws standing for
    the hidden instances, weighted (:attr:`PracticeDraw.weight`), ``drawn`` of them (0: none
    timed, the hidden instances then go at the visible ones' pace).
    """

    seconds: float
    ran: int
    sampled: float = 0.0
    drawn: int = 0
    hidden_seconds: float = 0.0  # the hidden instances', from the practice draws (weighted)
    draws: int = 0  # the practice draws there were: more than ``drawn`` when some were not run

    def projected(self, part: Part) -> float:
        """Seconds the graded cell would take at this pace."""
        if not self.drawn:
            return self.seconds * len(part.instances) / max(self.ran, 1)
        return self.seconds + self.hidden_seconds


def paced(draws: list[PracticeDraw], run: Callable[[str, Any], Any], pace: Pace) -> Pace:
    """``pace`` with ``run(kind, problem)`` (the learner's functions) timed on the practice
    ``draws`` too. What they print or raise is not shown: the visible instances have said it
    already. Once the graded cell is sure to run out of time, the rest are not run: the
    warning is certain, and a slow search does not keep the learner waiting for it; so is
    the test cell itself past half the cell's limit (Validate gives it no more time than the
    grader does). The hidden instances they stand for are then projected at the pace of the
    draws that ran (leaving them out made the projection too low: "about 142 s" for a cell
    that would take 270 s), and the warning says the projection may be short.

    Example (a draw standing for 3 hidden instances, timed once, counted three times):
        >>> p = paced([PracticeDraw("graph", None, 3.0)], lambda kind, problem: None, Pace(1.0, 2))
        >>> p.drawn, p.hidden_seconds == 3 * p.sampled
        (1, True)

    Stopped after the first of two draws (the visible instances took half the cell's limit,
    and the first draw pushed the test cell past it), the second's hidden instances go at the
    first's pace:
        >>> slow = Pace(CELL_SECONDS / 2, 1)
        >>> p = paced([PracticeDraw("g", None, 1.0)] * 2, lambda k, p: time.sleep(0.001), slow)
        >>> p.drawn, p.draws, p.hidden_seconds == 2 * p.sampled
        (1, 2, True)
    """
    sampled = weighted = done = 0.0
    drawn = 0
    for draw in draws:
        if pace.seconds + weighted > CELL_SECONDS or pace.seconds + sampled > CELL_SECONDS / 2:
            break
        started = time.perf_counter()
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                run(draw.kind, draw.problem)
        except Exception:  # noqa: BLE001, S110 - timed, not scored: the visible ones told
            pass
        took = time.perf_counter() - started
        sampled, weighted, drawn = sampled + took, weighted + took * draw.weight, drawn + 1
        done += draw.weight
    if 0 < drawn < len(draws):  # the rest at the pace of those that ran
        weighted *= sum(d.weight for d in draws) / done
    return dataclasses.replace(
        pace, sampled=sampled, drawn=drawn, hidden_seconds=weighted, draws=len(draws)
    )


def too_slow(part: Part, pace: Pace, limit: float | None = None) -> tuple[bool, str]:
    """``(fatal, warning)``: a warning when the graded cell, which runs every instance of
    ``part`` (hidden ones too), would take more than half its time limit at ``pace``;
    ``fatal`` past the limit itself, where the grader stops the cell and the part scores 0
    (Validate then fails the part too).

    Example:
        >>> from grader.problems.parts import get_part
        >>> fatal, text = too_slow(get_part("instgen_challenge"), Pace(30.0, 2))
        >>> fatal, text[:24]
        (True, 'Too slow for the grader:')
        >>> too_slow(get_part("instgen_challenge"), Pace(1.0, 2))
        (False, '')
        >>> fatal, text = too_slow(get_part("fusion_challenge"), Pace(1.0, 2, 9.0, 8, 70.0))
        >>> fatal, "9 s on 8 practice draws" in text, "about 71 s" in text
        (False, True, True)

    When some draws were not run (the cell was sure to run out of time), it says so:
        >>> fatal, text = too_slow(get_part("fusion_challenge"), Pace(1.0, 2, 9.0, 3, 130.0, 8))
        >>> fatal, "3 of the 8 practice draws" in text, "or more if the others" in text
        (True, True, True)
    """
    limit = CELL_SECONDS if limit is None else limit  # the grader's default cell limit
    seen = _projected(part, pace.projected(part), limit)
    if seen is None:
        return False, ""
    fatal = seen["projected"] > limit
    head = tr("Too slow for the grader: ") if fatal else tr("Close to the grader's time limit: ")
    if not pace.drawn:
        return fatal, head + tr(
            "your function took {seconds:.0f} s on the {ran} visible instance(s). Graded, this "
            "cell runs all {total} instances of the part, hidden ones included, within "
            "{limit:.0f} s: at this pace about {projected:.0f} s. A cell that runs out of time "
            "scores 0: make it faster (at most about {each:.1f} s per instance).",
            seconds=pace.seconds, ran=pace.ran, limit=limit, **seen,
        )  # fmt: skip
    if pace.drawn < pace.draws:
        return fatal, head + tr(
            "your function took {seconds:.0f} s on the {ran} visible instance(s), and "
            "{sampled:.0f} s on {drawn} of the {draws} practice draws made like the hidden "
            "instances, in their sizes (timed, never scored; the others were not run, this "
            "was enough to tell). Graded, this cell runs all {total} instances of the part, "
            "hidden ones included, within {limit:.0f} s: at this pace about {projected:.0f} s, "
            "or more if the others are larger. A cell that runs out of time scores 0: make it "
            "faster (at most about {each:.1f} s per instance).",
            seconds=pace.seconds, ran=pace.ran, sampled=pace.sampled, drawn=pace.drawn,
            draws=pace.draws, limit=limit, **seen,
        )  # fmt: skip
    return fatal, head + tr(
        "your function took {seconds:.0f} s on the {ran} visible instance(s), and {sampled:.0f} "
        "s on {drawn} practice draws made like the hidden instances, in their sizes (timed, "
        "never scored). Graded, this cell runs all {total} instances of the part, hidden ones "
        "included, within {limit:.0f} s: at this pace about {projected:.0f} s. A cell that "
        "runs out of time scores 0: make it faster (at most about {each:.1f} s per instance).",
        seconds=pace.seconds, ran=pace.ran, sampled=pace.sampled, drawn=pace.drawn,
        limit=limit, **seen,
    )  # fmt: skip


def too_large(part: Part, chars: int, ran: int, cap: int | None = None) -> tuple[bool, str]:
    """``(fatal, warning)``, as :func:`too_slow` but for the answer's size: the graded cell
    answers every instance of ``part``, and the grader refuses an answer larger than
    :data:`~grader.scoring.answer.MAX_ANSWER_CHARS` characters (the part then scores 0). An
    answer of ``chars`` characters for ``ran`` visible instances is projected to all of them:
    a warning past half the cap, ``fatal`` past the cap.

    Example (a program part, 66 instances, at 300,000 characters for each of its 2 visible ones):
        >>> from grader.problems.parts import get_part
        >>> fatal, text = too_large(get_part("instgen_challenge"), 600_000, 2)
        >>> fatal, text[:26]
        (True, 'Too large for the grader: ')
        >>> too_large(get_part("instgen_challenge"), 60_000, 2)
        (False, '')
    """
    cap = MAX_ANSWER_CHARS if cap is None else cap
    seen = _projected(part, chars * len(part.instances) / max(ran, 1), cap)
    if seen is None:
        return False, ""
    fatal = seen["projected"] > cap
    head = tr("Too large for the grader: ") if fatal else tr("Close to the grader's size limit: ")
    return fatal, head + tr(
        "your answer takes {chars:,} characters for the {ran} visible instance(s). Graded, this "
        "cell answers all {total} instances of the part, hidden ones included, and the grader "
        "refuses an answer over {cap:,} characters: at this size about {projected:,.0f}. A "
        "refused answer scores 0: make it smaller (at most about {each:,.0f} characters per "
        "instance).",
        chars=chars, ran=ran, cap=cap, **seen,
    )  # fmt: skip


def _projected(part: Part, projected: float, limit: float) -> dict[str, Any] | None:
    """None within half of ``limit``, else the numbers a warning states (``total``,
    ``projected``, and ``each``, the limit's share per instance)."""
    if projected <= limit / 2:
        return None
    total = len(part.instances)
    return {"total": total, "projected": projected, "each": limit / total}
