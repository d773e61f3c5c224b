"""How much a notebook's points move with the draw of hidden instances.

Every submission is graded on hidden instances drawn for it (:mod:`~grader.problems.hidden`), so
the same
solution meets other instances in another course run, or after a one-character edit. A fair
grade barely moves with that draw. This module grades a notebook's functions, in this process
and without nbgrader, on the hidden instances of many course secrets, with the grader's own
scoring: the points per part and secret, and their spread.

It is what ``benchmarks/grading_spread.py`` reports (the model solution and a middling one
over 20 secrets, target: a spread of at most 0.1 points per part), and what the tests use to
check that the course's model solution earns full marks on every secret.

Example (``python -m grader.scoring.spread --secrets 3 --parts memory_liveness``)::

    part             solution  min    max    spread
    memory_liveness  model     2.000  2.000  0.000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from grader.notebook import _answer_one
from grader.problems.hidden import seeds_for
from grader.problems.part import Part
from grader.problems.parts import ASSIGNMENTS, PARTS
from grader.sandbox.view import withheld
from grader.scoring.answer import encode
from grader.scoring.credit import mean_credit
from grader.scoring.grade import score_answer
from grader.scoring.partscore import PartScore

ROOT = Path(__file__).resolve().parents[2]


def notebook_namespace(path: Path) -> dict[str, Any]:
    """Run a notebook's code cells but its test cells (those that call ``submit``) in a fresh
    namespace, quietly (figures are not shown); the functions it defines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nb = nbformat.read(path, as_version=4)
    scope: dict[str, Any] = {"__name__": "__notebook__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type != "code" or (meta.get("grade") and not meta.get("solution")):
                continue
            exec(compile(cell.source, str(path), "exec"), scope)  # noqa: S102 - our notebooks
            plt.close("all")
    return scope


def scored(part: Part, fns: tuple[Callable[..., Any], ...]) -> PartScore:
    """How the grader scores ``fns`` on ``part`` (bound): points and each instance's numbers,
    on its hidden instances (the reference passes withheld while ``fns`` run)."""
    problems = {i.id: (i.kind, i.build()) for i in part.hidden()}
    with withheld(part.assignment), contextlib.redirect_stdout(io.StringIO()):
        answers = {iid: _answer_one(iid, kind, obj, fns) for iid, (kind, obj) in problems.items()}
    doc = encode(part.id, answers)
    return score_answer(
        part, doc, points=part.points, required=list(problems), counted=list(problems)
    )


def points(part: Part, fns: tuple[Callable[..., Any], ...]) -> float:
    """The points ``fns`` earn on ``part`` (bound), counted on its hidden instances."""
    return scored(part, fns).score


@dataclass(frozen=True)
class Spread:
    """One solution's points on one part over several secrets."""

    part: str
    solution: str
    scores: tuple[float, ...]
    #: on a part graded on a benchmark: per secret, the mean credit on the graphs drawn to
    #: check it minus the benchmark's (how near an honest pass comes to failing the check,
    #: :data:`~grader.scoring.partscore.CHECK_MARGIN`), and how many secrets failed it
    gaps: tuple[float, ...] = ()
    failed_checks: int = 0

    @property
    def spread(self) -> float:
        return max(self.scores) - min(self.scores)


def check_gap(score: PartScore) -> float:
    """The mean credit on the graphs drawn to check a benchmark minus the benchmark's."""
    drawn = mean_credit(score.check_scores(), score.families)
    return drawn - mean_credit(score.graded_scores(), score.families)


def spread(
    part_ids: Iterable[str],
    solutions: Mapping[str, Mapping[str, tuple[Callable[..., Any], ...]]],
    secrets: int = 20,
    progress: bool = False,
) -> list[Spread]:
    """Points per part, solution and secret: ``solutions`` maps a solution's name to
    ``{part id: its functions}``; secret ``k`` is ``b"spread secret k"``. ``progress``: a
    line on stderr per secret as it is scored."""
    out = []
    for pid in part_ids:
        for name, fns in solutions.items():
            if pid not in fns:
                continue
            scores, gaps, failed = [], [], 0
            for k in range(secrets):
                seeds = seeds_for(f"spread secret {k}".encode(), [pid], "a submission")
                score = scored(PARTS[pid].bind(seeds), fns[pid])
                scores.append(score.score)
                if score.checked:
                    gaps.append(check_gap(score))
                    failed += score.failed_check
                if progress:
                    print(f"{pid} {name} secret {k}: {scores[-1]}", file=sys.stderr, flush=True)
            out.append(Spread(pid, name, tuple(scores), tuple(gaps), failed))
    return out


def notebook_functions(folder: Path) -> dict[str, tuple[Callable[..., Any], ...]]:
    """``{part id: functions}`` of the notebooks in ``folder`` (one per assignment, as a
    learner hands them in: ``folder/<assignment>/<assignment>.ipynb``), for the parts whose
    functions they define."""
    out = {}
    for assignment, part_ids in ASSIGNMENTS.items():
        path = folder / assignment / f"{assignment}.ipynb"
        if not path.is_file():
            continue
        scope = notebook_namespace(path)
        for pid in part_ids:
            if all(name in scope for name in PARTS[pid].functions):
                out[pid] = tuple(scope[name] for name in PARTS[pid].functions)
    return out


def model_functions() -> dict[str, tuple[Callable[..., Any], ...]]:
    """``{part id: functions}`` of the course's model solutions (``solutions/``)."""
    return notebook_functions(ROOT / "solutions")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m grader.scoring.spread")
    ap.add_argument("--secrets", type=int, default=20)
    ap.add_argument("--parts", nargs="*", default=list(PARTS))
    args = ap.parse_args(argv)
    rows = spread(args.parts, {"model": model_functions()}, args.secrets)
    print(f"{'part':18} {'solution':9} {'min':>6} {'max':>6} {'spread':>7}")
    for r in rows:
        print(f"{r.part:18} {r.solution:9} {min(r.scores):6.3f} {max(r.scores):6.3f} "
              f"{r.spread:7.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
