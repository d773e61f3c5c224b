"""The kernel side of grading: run the learner's function, hand back the answer.

A test cell ends with ``submit(part_id, fn, ...)``. It runs ``fn`` on each instance of the
part, serialises what came back (:mod:`grader.scoring.answer`), and returns an
:class:`Answer`, which a notebook shows as the answer data (MIME type
:data:`~grader.scoring.answer.MIME`) plus a *provisional* score on the visible instances for
self-checking. The provisional score is never trusted: the autograder recomputes every score
outside the kernel, and counts the hidden instances it drew for the submission.

What the test cell shows is what the grader does on the same instances: the learner's
functions run with the assignment's reference implementations withheld, exactly as in the
grading view (:func:`grader.sandbox.view.withheld`), so an answer that leans on one scores
0 here with the grader's message, not only later.

Example:
    >>> from chipsim.passes.fusion import Partition
    >>> a = submit("fusion_chains", lambda g, chip: Partition([[0]]), score=False)
    >>> sorted(a.doc["answers"])
    ['chains_a', 'chains_b']
"""

from __future__ import annotations

import io
import operator
import os
import textwrap
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr
from typing import Any

from chipsim.i18n import tr
from grader.pace import Pace, paced, practice_draws, too_large, too_slow
from grader.problems.data import hidden_problems
from grader.problems.part import Part
from grader.problems.parts import ALIGNMENT, CHIP, get_part
from grader.sandbox.outputs import size
from grader.sandbox.view import withheld
from grader.scoring.answer import (
    MIME,
    encode,
    graph_fingerprint,
    records_fingerprint,
)
from grader.scoring.credit import show_points
from grader.scoring.partscore import feedback_language


class NotFullCredit(AssertionError):
    """Raised by :func:`submit` under ``nbgrader validate`` when a part is not fully solved.

    nbgrader's Validate reads a test cell without an error as full credit, so a blank or
    broken part would "pass". Under Validate (only there: the autograder's own copy of the
    cell never raises, so partial credit still counts at grading time) an answer below full
    marks on the visible instances becomes this error, whose message is the score's
    explanation.
    """

    def _render_traceback_(self) -> list[str]:
        """What IPython shows (and so Validate): the explanation alone. The frames are the
        course's own code, not the learner's; a learner read them first and took them for
        the mistake (IPython calls this instead of formatting the traceback)."""
        return [f"{type(self).__name__}: {self}"]


class Answer:
    """What a test cell returns: the answer document, and a provisional score to look at."""

    def __init__(
        self, part: Part, doc: dict[str, Any], provisional: Any = None, warning: str = ""
    ) -> None:
        self.part, self.doc, self.provisional = part, doc, provisional
        self.warning = warning  # too slow or too large for the graded cell (see too_slow)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if _validating() and self.provisional is not None:
            # nbgrader's Validate reads a test cell's result as its points: give it the number
            return {MIME: self.doc, "text/plain": repr(float(self.provisional.score))}
        return {MIME: self.doc, "text/plain": self.text()}

    def text(self) -> str:
        n = len(self.doc["answers"])
        lines = [tr("Answer for part {part} ({title}), {n} instance(s).", part=self.part.id,
                    title=tr(self.part.title), n=n)]  # fmt: skip
        if self.provisional is not None:
            if self.part.checks():
                said = tr(
                    "Provisional score on the visible instances: {points} of {total} points "
                    "(the grade is computed by the grader, the same way, on the benchmark's "
                    "hidden instances, and checked on others it draws for your submission).",
                    points=show_points(self.provisional.score),
                    total=show_points(self.provisional.points),
                )  # fmt: skip
            else:
                said = tr(
                    "Provisional score on the visible instances: {points} of {total} points "
                    "(the grade is computed by the grader, the same way, on hidden instances "
                    "it draws for your submission).",
                    points=show_points(self.provisional.score),
                    total=show_points(self.provisional.points),
                )  # fmt: skip
            lines.append(said)
            lines.append(self.provisional.explain())
            hidden = len(self.part.graded())
            full = self.provisional.score >= self.provisional.points
            if self.part.challenge and hidden and full and self.part.checks():
                lines.append(
                    tr(
                        "Full points on these {visible} visible instances do not promise full "
                        "points on the {hidden} graphs of the benchmark: it has every size, and "
                        "a pass as good as the reference here can fall behind it there.",
                        visible=len(self.part.visible()),
                        hidden=hidden,
                    )
                )
            elif self.part.challenge and hidden and full:
                lines.append(
                    tr(
                        "Full points on these {visible} visible instances do not promise full "
                        "points on the {hidden} hidden ones: an open challenge is graded on "
                        "every size it draws, and a pass as good as the reference here can "
                        "fall behind it there.",
                        visible=len(self.part.visible()),
                        hidden=hidden,
                    )
                )
        if self.warning:
            lines.append(self.warning)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text()


def instances(part_id: str, *, hidden: bool = False) -> dict[str, Any]:
    """The visible instances of a part (graphs or usage records), to explore in a notebook.

    ``hidden=True`` adds the hidden ones, which exist only while the notebook is graded (the
    grader hands the kernel their data)."""
    return {iid: problem for iid, (_kind, problem) in _problems(get_part(part_id), hidden).items()}


def _problems(part: Part, hidden: bool) -> dict[str, tuple[str, Any]]:
    """``{instance id: (kind, problem)}``: the visible instances, then the hidden ones."""
    found = {i.id: (i.kind, i.build()) for i in part.visible()}
    if hidden:
        found.update(hidden_problems(part.id))
    return found


def submit(
    part_id: str, *fns: Callable[..., Any], hidden: bool = False, score: bool | None = None
) -> Answer:
    """Run the learner's function(s) on the part's instances; return the :class:`Answer`.

    Args:
        part_id: the part (the test cell's grade id), e.g. ``"fusion_chains"``.
        *fns: the learner's function(s), as listed in the part's ``functions``.
        hidden: include the hidden instances (only the autograder's test cells do).
        score: compute the provisional score for self-checking. By default it is computed
            except under ``nbgrader autograde`` (which sets ``NBGRADER_EXECUTION``), where
            the grader computes the real score anyway.
    """
    part = get_part(part_id)
    if len(fns) != len(part.functions):
        raise TypeError(f"part {part_id!r} takes {len(part.functions)} function(s): "
                        f"{', '.join(part.functions)}")  # fmt: skip
    grading = os.environ.get("NBGRADER_EXECUTION") == "autograde"
    if score is None:
        score = not grading
    problems = _problems(part, hidden)
    # The forecast of the graded cell (time and size) is the learner's: the grader meets the
    # real thing, and its view cannot build the practice draws (a challenge's needs the
    # reference to be drawn).
    forecast = not (hidden or grading)
    draws = practice_draws(part) if forecast else []  # before the references are withheld
    started = time.perf_counter()
    with withheld(part.assignment):  # as in the grading view: the reference passes raise
        answers = {iid: _answer_one(iid, kind, obj, fns) for iid, (kind, obj) in problems.items()}
        seconds = time.perf_counter() - started
        pace = paced(draws, _run(fns), Pace(seconds, len(problems))) if forecast else None
    doc = encode(part.id, answers, language=feedback_language())
    fatal, warning = False, ""
    if pace is not None:  # what the graded cell, with every instance, would meet
        checks = (too_slow(part, pace), too_large(part, size(doc), len(problems)))
        fatal = any(f for f, _ in checks)
        warning = "\n".join(w for _, w in checks if w)
    provisional = None
    if score:
        from grader.scoring.grade import score_answer

        visible = [i.id for i in part.visible()]
        provisional = score_answer(part, doc, points=part.points, required=visible)
        if _validating() and fatal:  # the grader would stop the cell: the part scores 0
            raise NotFullCredit(wrapped(warning))
        if _validating() and provisional.score < provisional.points:
            raise NotFullCredit(
                wrapped(
                    tr(
                        "not there yet: {score} of {points} points on the visible instances.",
                        score=show_points(provisional.score),
                        points=show_points(provisional.points),
                    )  # fmt: skip
                    + "\n"
                    + provisional.explain()
                )
            )
    return Answer(part, doc, provisional, warning)


#: nbgrader's Validate cuts every line of an error at 87 characters (its ``width`` less its
#: indent and "..."): the explanation it shows is wrapped to fit, so nothing is cut.
VALIDATE_WIDTH = 80


def wrapped(text: str, width: int = VALIDATE_WIDTH) -> str:
    """``text`` with every line longer than ``width`` wrapped, continuation lines indented
    two more spaces than the line's own indent.

    Example:
        >>> print(wrapped("  - one two three four", width=14))
          - one two
            three four
    """
    out = []
    for line in text.split("\n"):
        indent = line[: len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False,
                             drop_whitespace=True) or [line]  # fmt: skip
    return "\n".join(out)


def _run(fns: tuple[Callable[..., Any], ...]) -> Callable[[str, Any], Any]:
    """The learner's functions as one call on ``(kind, problem)``, for timing."""
    return lambda kind, problem: _RUNNERS[kind](problem, fns)


def _validating() -> bool:
    """Is this kernel run by ``nbgrader validate`` (the command or the Validate button)?"""
    return os.environ.get("NBGRADER_EXECUTION") == "validate"


def _answer_one(
    instance: str, kind: str, obj: Any, fns: tuple[Callable[..., Any], ...]
) -> dict[str, Any]:
    try:
        # A learner's warning is not a wrong answer: keep it off the graded cell's stderr.
        with redirect_stderr(io.StringIO()):
            return _RUNNERS[kind](obj, fns)
    except Exception as exc:  # the learner's code may raise anything: it is recorded, not fatal
        where = _learner_frame(exc)
        at = tr("(line {line} of {function})", line=where.lineno, function=where.name)
        msg = f"{type(exc).__name__}: {exc} {at}"
        print(f"{instance}: {msg}")
        return {"error": msg}


def _learner_frame(exc: BaseException) -> traceback.FrameSummary:
    """The innermost frame of ``exc``'s traceback in the learner's code (chipsim's
    :func:`~chipsim.compiler.fusion.your_frame`: not chipsim, Python, a library or a
    withheld reference's stub), so that an error raised deep in chipsim or by a withheld
    pass names the learner's line that led there; the innermost frame when none is theirs."""
    from chipsim.compiler.fusion import your_frame

    return your_frame(exc) or traceback.extract_tb(exc.__traceback__)[-1]


def _classify(items: dict, fns: tuple) -> dict:
    from chipsim.ir.ops import Pattern

    pattern_of, may_fuse = fns
    patterns = {op: str(pattern_of(op)) for op in items["ops"]}
    pairs = [
        [p, c, bool(may_fuse(Pattern[p.upper()], Pattern[c.upper()]))] for p, c in items["pairs"]
    ]
    return {"patterns": patterns, "may_fuse": pairs}


def _fusion(graph: Any, fns: tuple) -> dict:
    from chipsim.hw import get_chip
    from chipsim.passes.fusion import Partition

    partition = fns[0](graph, get_chip(CHIP))
    if not isinstance(partition, Partition):
        raise TypeError(f"the fusion pass returned {type(partition).__name__}, not a Partition")
    return {
        "graph": graph_fingerprint(graph),
        "groups": [[operator.index(i) for i in g] for g in partition.groups],
    }


def _units(problem: dict, fns: tuple) -> dict:
    from chipsim.hw import get_chip

    chip = get_chip(CHIP)
    answers = []
    for item in problem["items"]:
        unit, cycles = fns[0](dict(item), chip)
        answers.append([str(unit), operator.index(cycles)])
    return {"units": answers}


def _program(graph: Any, fns: tuple) -> dict:
    from chipsim.codegen.builder import KernelBuilder
    from chipsim.hw import get_chip

    kb = KernelBuilder(graph, get_chip(CHIP))
    made = fns[0](kb)
    if made is not None and not isinstance(made, KernelBuilder):
        raise TypeError(f"return the KernelBuilder you were given (or nothing), not "
                        f"{type(made).__name__}")  # fmt: skip
    return {"graph": graph_fingerprint(graph), "program": (made or kb).data()}


def _liveness(problem: tuple, fns: tuple) -> dict:
    graph, order = problem
    records = fns[0](graph, [graph.nodes[i] for i in order])
    rows = [[str(r.id), *(operator.index(x) for x in (r.size, r.first, r.last))] for r in records]
    return {"graph": graph_fingerprint(graph), "records": rows}


def _offsets(records: list, fns: tuple) -> dict:
    plan = fns[0](list(records), alignment=ALIGNMENT)
    offsets = plan.offsets if hasattr(plan, "offsets") else plan
    if not isinstance(offsets, dict):
        raise TypeError(f"the planner returned {type(plan).__name__}; return a MemoryPlan")
    clean = {str(k): operator.index(v) for k, v in offsets.items()}  # ints only, JSON-safe
    return {"records": records_fingerprint(records), "offsets": clean}


def _plan(graph: Any, fns: tuple) -> dict:
    from grader.problems.families import plan_records

    return _offsets(plan_records(graph), fns)


_RUNNERS = {
    "classify": _classify,
    "units": _units,
    "program": _program,
    "fusion": _fusion,
    "liveness": _liveness,
    "first_fit": _offsets,
    "arena": _offsets,
    "plan": _plan,
}
