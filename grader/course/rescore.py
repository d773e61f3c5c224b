"""``RescoreAnswers``: the nbgrader autograde step that recomputes every score outside the kernel.

Registered in ``nbgrader_config.py`` after ``Execute`` and before ``SaveAutoGrades``. For each
notebook it:

1. binds the hidden instances drawn for this submission (:mod:`grader.problems.hidden`:
   from a secret only the grader holds and the notebook's own digest, the same draw the
   kernel was given the data of);
2. checks that chipsim's files are unchanged since the grader started (a sha256 snapshot
   taken when this module is imported). When the notebook ran unsandboxed its kernel could
   have changed them: every part of *this* notebook scores 0 and the snapshot writes the
   original files back, so the next students are graded by the pristine package. In the
   sandbox a kernel cannot write them (it sees a read-only view): a change is someone
   else's, so it is only flagged for the instructor;
3. reads the learner's editable code cells (every code cell that is not a locked cell of the
   released notebook, judged against the gradebook's copy) and scans them statically
   (:func:`grader.course.static_check.instructor_flags`): the findings are *flags for the
   instructor* (``nb.metadata["chipsim"]["flags"]``, collected into
   ``gradebook/flags.csv`` by ``make grade``), never a score — the sandboxed kernel had no
   reference pass to call;
4. for each test cell whose ``grade_id`` is a part of :mod:`grader.problems.parts`, finds
   the answer output (MIME type :data:`~grader.scoring.answer.MIME`), scores it from the
   pristine problem definitions, and replaces the cell's outputs with the explanation, a
   picture (yours beside the reference's) and an ``execute_result`` holding the plain float
   score. The points come from the hidden instances; the visible ones are scored as well
   and shown as a preview (what the learner's test cell showed). stderr from the learner
   (a warning, say) is dropped with the old outputs, so it costs nothing.

Only the answer *data* is taken from the kernel; everything else is recomputed here.
"""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr
from dataclasses import astuple, replace
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

# Import everything grading needs now, while the package is known to be pristine.
import chipsim.codegen.lower  # noqa: F401
import chipsim.compiler  # noqa: F401
import chipsim.runtime.program  # noqa: F401
import chipsim.viz.memory_plan  # noqa: F401
import chipsim.viz.timeline  # noqa: F401
from chipsim.i18n import N_, listing, tr, use_language
from grader.course.copies import COPY_SIMILARITY, copied_from
from grader.course.static_check import (
    Flag,
    instructor_flags,
    reached_cells,
    test_names,
)
from grader.course.static_check import parse as parse_cell
from grader.feedback.render import picture_output, result_output, text_output
from grader.feedback.standings import CHALLENGES, measured
from grader.problems.hidden import configured, submission_key
from grader.problems.part import Part
from grader.problems.parts import ASSIGNMENTS, PARTS
from grader.sandbox.manifest import Snapshot
from grader.sandbox.outputs import TIMED_OUT
from grader.sandbox.view import reference_sources
from grader.scoring.answer import MIME
from grader.scoring.grade import answer_language, remembered_language, score_answer
from grader.scoring.partscore import PartScore, zero

#: The package as it was when the grader process started.
SNAPSHOTS = Snapshot.both()


class RescoreAnswers(NbGraderPreprocessor):
    """Recompute each chipsim part's score in the grader's process (see the module docstring)."""

    restore_package = Bool(
        True,
        help="Write chipsim's original files back when a notebook changed them, so that the "
        "next students are graded by the pristine package.",
    ).tag(config=True)

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        info = resources.get("nbgrader", {})
        assignment = str(info.get("assignment", ""))
        sandbox = resources.get("chipsim", {}).get("sandbox", "none")
        changed = [f"{s.root.name}/{f}" for s in SNAPSHOTS for f in s.changed()]
        tampered: list[str] = []
        if changed and sandbox == "none":  # this notebook's kernel could have done it
            if self.restore_package:
                for snap in SNAPSHOTS:
                    snap.restore()
            tampered = changed
        trusted = self._trusted_sources(info)
        editable = [
            (i, c.source)
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and not self._is_trusted(c, trusted)
        ]
        kind = assignment if assignment in ASSIGNMENTS else _guess_assignment(nb)
        tests = {_gid(c): c.source for c in nb.cells if _gid(c) in PARTS and _is_grade(c)}
        flags = instructor_flags(
            editable, tests, assignment=kind, forbidden={p: PARTS[p].forbidden for p in tests}
        )
        hidden = configured(self)
        submission = resources.get("chipsim", {}).get("submission") or submission_key(nb)
        notes = nb.metadata.setdefault("chipsim", {})
        restored = set(notes.get("restored", ()))  # by grader.course.sanitize
        measured_here: dict[str, Any] = {}  # the grader's challenge numbers (leaderboard)
        written_in: list[str] = []  # the language of each part's feedback
        language = remembered_language(nb)  # the learner's, from their own last run
        with warnings.catch_warnings(), redirect_stderr(io.StringIO()), use_language(language):
            warnings.simplefilter("ignore")  # nothing the grader does may print to stderr
            for cell in nb.cells:
                part_id = _gid(cell)
                if cell.cell_type == "code" and part_id in PARTS and _is_grade(cell):
                    part = hidden.bind(PARTS[part_id], submission)
                    score = self._score(cell, part, tampered)
                    _rewrite(cell, score, part_id in restored)
                    written_in.append(score.language)
                    flags += copy_flags(score, kind, editable, tests.get(part_id, ""))
                    if part_id in CHALLENGES:
                        measured_here[part_id] = measured(score)
        if written_in:  # from here on, the feedback's language: the page's own words follow
            # it (grader.feedback.page); the parts speak the language the learner's kernel
            # answered in, whatever their last run left in the notebook
            notes["language"] = max(sorted(set(written_in)),  # a tie: the remembered one
                                    key=lambda w: (written_in.count(w), w == language))  # fmt: skip
        notes.update(
            measured=measured_here,  # replaces whatever the submitted notebook carried
            sandbox=sandbox,
            flags=[
                dict(zip(("part", "cell", "line", "what"), astuple(f), strict=False)) for f in flags
            ],
            package_changed=changed if sandbox != "none" else [],
        )
        return nb, resources

    # -- which cells the learner could have edited ----------------------------------------
    def _trusted_sources(self, info: dict) -> dict[str, str]:
        """grade_id -> source of the released notebook's locked cells (from the gradebook)."""
        try:
            from nbgrader.api import Gradebook

            with Gradebook(info["db_url"]) as gb:
                notebook = gb.find_notebook(info["notebook"], info["assignment"])
                return {c.name: c.source for c in notebook.source_cells if c.locked}
        except Exception:  # no gradebook entry: trust nothing but grade cells' metadata
            return {}

    @staticmethod
    def _is_trusted(cell: Any, trusted: dict[str, str]) -> bool:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if meta.get("solution"):
            return False
        if gid in trusted:
            return trusted[gid] == cell.source
        return bool(meta.get("grade")) and gid in PARTS  # restored by nbgrader's OverwriteCells

    # -- scoring one part ------------------------------------------------------------------
    def _score(self, cell: Any, part: Part, tampered: list[str]) -> PartScore:
        points = float(cell.metadata["nbgrader"].get("points", part.points))
        ids = tuple(i.id for i in part.instances)
        counted = tuple(i.id for i in part.hidden())
        checks = tuple(i.id for i in part.checks())
        doc = _find_answer(cell)
        with use_language(answer_language(doc)):  # the learner's, as their kernel recorded it
            if tampered:
                shown = listing(tampered[:5])
                why = tr(
                    "chipsim's own files were changed while this notebook ran ({files}); 0 points",
                    files=shown,
                )
                return replace(zero(part.id, points, why, ids), counted=counted, checked=checks)
            if doc is None:
                ename, error = _error(cell)
                if ename == TIMED_OUT:  # its words are the learner's language: its name is not
                    why = tr(
                        "no answer: {error}. Graded, this cell runs your function on all "
                        "{n} instances of the part, visible and hidden, within that time: "
                        "make it faster",
                        error=error, n=len(ids),
                    )  # fmt: skip
                else:
                    why = tr("no answer found: the test cell must end with submit(...)")
                    why += f" ({ename}: {error})" if ename else ""
                return replace(zero(part.id, points, why, ids), counted=counted, checked=checks)
        counted = [i.id for i in part.hidden()]
        return score_answer(part, doc, points=points, counted=counted)


def _gid(cell: Any) -> Any:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_grade(cell: Any) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def _guess_assignment(nb: Any) -> str:
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in PARTS:
            return PARTS[gid].assignment
    return ""


def _find_answer(cell: Any) -> Any:
    """The last answer document among the cell's outputs, or None."""
    found = None
    for out in cell.get("outputs", []):
        data = out.get("data", {}) if out.get("output_type") != "stream" else {}
        if MIME in data:
            found = data[MIME]
    return found


def _error(cell: Any) -> tuple[str, str]:
    """The name and the message of the cell's first error output (``("", "")``: none)."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return str(out.get("ename", "Error")), str(out.get("evalue", ""))[:200]
    return "", ""


#: Said in the feedback of a test cell the grader had to restore (grader.course.sanitize).
RESTORED = N_(
    "Note: this test cell was changed or deleted in your notebook; the grader used the "
    "course's original. Test cells are the course's: leave them as they are."
)


def _rewrite(cell: Any, score: PartScore, restored: bool = False) -> None:
    """Replace the outputs with: explanation, picture, and the plain float score."""
    from nbformat import from_dict

    explain = score.explain()
    if restored:
        with use_language(score.language):
            explain = f"{tr(RESTORED)}\n\n{explain}"
    outputs = [text_output(explain)]
    picture = picture_output(score)
    if picture is not None:
        outputs.append(picture)
    outputs.append(result_output(score.score, cell.get("execution_count")))
    cell.outputs = [from_dict(o) for o in outputs]


def copy_flags(score: PartScore, assignment: str, editable: list, test_source: str) -> list[Flag]:
    """A flag for the instructor when a part's answers are the reference's on every hidden
    instance *and* the code behind them is the reference implementation's (up to names):
    the learner pasted the course's own answer (:func:`~grader.course.copies.copied_from`)."""
    counted = score.counted_scores()
    if not counted or not all(s.matches_reference for s in counted):
        return []
    tree = parse_cell(test_source)
    reached = reached_cells(test_names(tree), editable)
    mine, ref, similarity = copied_from([src for _, src in reached], reference_sources(assignment))
    if similarity < COPY_SIMILARITY:
        return []
    cell = next((i for i, src in reached if f"def {mine}(" in src), reached[0][0] if reached else 0)
    what = (f"its answers are the reference's on every hidden instance, and {mine}() is "
            f"{ref} with other names ({similarity:.0%} of its code): a copy of the course's "
            "reference implementation?")  # fmt: skip
    return [Flag(score.part, cell, 0, what)]
