"""Grades out of the gradebook: a CSV (one row per student, part) and the score distributions.

Example:
    >>> rows = [Row("ada", "fusion", "fusion_chains", 3.0, 3.0),
    ...         Row("bob", "fusion", "fusion_chains", 1.5, 3.0)]
    >>> totals(rows)
    {'ada': (3.0, 3.0), 'bob': (1.5, 3.0)}
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Row:
    """One student's score on one part (a graded cell)."""

    student: str
    assignment: str
    part: str
    score: float
    max_score: float
    #: "graded", "needs manual grading" (no automatic score), or "not graded: <why>"
    status: str = "graded"


def collect(db_url: str, not_graded: dict[tuple[str, str], str] | None = None) -> list[Row]:
    """Every autograded score in the gradebook, sorted by assignment, part, student.

    ``not_graded``: (student, assignment) -> why the last grading run could not grade it; its
    rows say so in ``status`` (their score is whatever the gradebook still holds, or 0)."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(db_url) as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                why = (not_graded or {}).get((sub.student.id, assignment.name))
                for nb in sub.notebooks:
                    for g in nb.grades:
                        score = g.score if g.score is not None else 0.0
                        status = f"not graded: {why}" if why else "graded"
                        if not why and g.auto_score is None and g.manual_score is None:
                            status = "needs manual grading"
                        rows.append(
                            Row(
                                sub.student.id, assignment.name, g.name, score, g.max_score, status
                            )  # fmt: skip
                        )
    return sorted(rows, key=lambda r: (r.assignment, r.part, r.student))


def totals(rows: Sequence[Row]) -> dict[str, tuple[float, float]]:
    """Each student's points and the points there were, over the parts in ``rows``."""
    out: dict[str, tuple[float, float]] = {}
    for r in rows:
        score, top = out.get(r.student, (0.0, 0.0))
        out[r.student] = (score + r.score, top + r.max_score)
    return dict(sorted(out.items()))


def write_csv(rows: Sequence[Row], path: Path) -> Path:
    """``student,assignment,part,score,max_score,status``, one line per row."""
    path = Path(path)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f.name for f in fields(Row)])
        w.writerows(astuple(r) for r in rows)
    return path


def plot_distribution(rows: Sequence[Row], path: Path) -> Path:
    """One histogram per part (points on x, students on y), saved as a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    parts = sorted({(r.assignment, r.part) for r in rows})
    cols = min(4, max(1, len(parts)))
    nrows = max(1, -(-len(parts) // cols))
    fig = Figure(figsize=(3.2 * cols, 2.6 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, cols, squeeze=False).ravel()
    for ax, (assignment, part) in zip(axes, parts, strict=False):
        mine = [r for r in rows if (r.assignment, r.part) == (assignment, part)]
        top = max(r.max_score for r in mine)
        ax.hist([r.score for r in mine], bins=10, range=(0, top), color="#4c72b0")
        ax.set_title(part, fontsize=9)
        ax.set_xlabel(f"points (of {top:g})", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
    for ax in axes[len(parts) :]:
        ax.set_visible(False)
    n = len(totals(rows))
    fig.suptitle(f"Score distribution per part ({n} student{'' if n == 1 else 's'})")
    fig.savefig(path, dpi=80, metadata={"Software": None})
    return Path(path)
