"""``RescoreAnswers``: the nbgrader autograde step that recomputes every score outside the kernel.

Registered in ``nbgrader_config.py`` after ``Execute`` and before ``SaveAutoGrades``. For each
notebook it:

1. checks that chipsim's files are unchanged since the grader started (a sha256 snapshot
   taken when this module is imported, before any learner code runs). A change scores every
   part of *this* notebook 0 and the snapshot writes the original files back, so the next
   students are graded by the pristine package;
2. reads the learner's editable code cells (every code cell that is not a locked cell of the
   released notebook, judged against the gradebook's copy) and checks them statically
   (:mod:`chipsim.grading.static_check`): a part scores 0 when a cell its test cell reaches
   (through the names it uses, transitively) breaks the rules; a rule broken in a cell that
   no part reaches scores every part 0 (it can only be there to smuggle something in);
3. for each test cell whose ``grade_id`` is a part of :mod:`chipsim.grading.problems`, finds
   the answer output (MIME type :data:`~chipsim.grading.answer.MIME`), scores it from the
   pristine problem definitions, and replaces the cell's outputs with the explanation, a
   picture (yours beside the reference's) and an ``execute_result`` holding the plain float
   score. stderr from the learner (a warning, say) is dropped with the old outputs, so it
   costs nothing.

Only the answer *data* is taken from the kernel; everything else is recomputed here.
"""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

# Import everything grading needs now, while the package is known to be pristine.
import chipsim.codegen.lower  # noqa: F401
import chipsim.compiler  # noqa: F401
import chipsim.runtime.program  # noqa: F401
import chipsim.viz.memory_plan  # noqa: F401
import chipsim.viz.timeline  # noqa: F401
from chipsim.grading.answer import MIME
from chipsim.grading.grade import score_answer
from chipsim.grading.manifest import Snapshot
from chipsim.grading.problems import ASSIGNMENTS, PARTS
from chipsim.grading.render import picture_output, result_output, text_output
from chipsim.grading.scoring import PartScore, zero
from chipsim.grading.static_check import check_cells, parse, reached_cells, used_names

#: The package as it was when the grader process started.
SNAPSHOT = Snapshot.take()


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
        tampered = SNAPSHOT.restore() if self.restore_package else SNAPSHOT.changed()
        trusted = self._trusted_sources(info)
        editable = [
            (i, c.source)
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and not self._is_trusted(c, trusted)
        ]
        kind = assignment if assignment in ASSIGNMENTS else _guess_assignment(nb)
        everywhere = _orphan_violations(nb, editable, kind)
        with warnings.catch_warnings(), redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")  # nothing the grader does may print to stderr
            for cell in nb.cells:
                part_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                if cell.cell_type == "code" and part_id in PARTS and _is_grade(cell):
                    score = self._score(cell, part_id, kind, editable, everywhere, tampered)
                    _rewrite(cell, score)
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
    def _score(self, cell, part_id, kind, editable, everywhere, tampered) -> PartScore:
        part = PARTS[part_id]
        points = float(cell.metadata["nbgrader"].get("points", part.points))
        ids = tuple(i.id for i in part.instances)
        if tampered:
            shown = ", ".join(tampered[:5])
            why = f"chipsim's own files were changed while this notebook ran ({shown}); 0 points"
            return zero(part.id, points, why, ids)
        if everywhere:
            return zero(part.id, points, _forbidden_message(everywhere), ids)
        tree = parse(cell.source)
        start = used_names(tree) if tree is not None else set()
        reached = reached_cells(start, editable)
        own = check_cells(reached, assignment=kind, extra=part.forbidden)
        if own:
            return zero(part.id, points, _forbidden_message(own), ids)
        doc = _find_answer(cell)
        if doc is None:
            why = "no answer found: the test cell must end with submit(...)"
            error = _error_text(cell)
            return zero(part.id, points, why + (f" ({error})" if error else ""), ids)
        return score_answer(part, doc, points=points)


def _reached_by_parts(nb: Any, editable: list) -> set[int]:
    """Indices of the editable cells some part's test cell reaches through its names."""
    seen: set[int] = set()
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and gid in PARTS and _is_grade(cell):
            tree = parse(cell.source)
            if tree is not None:
                seen.update(i for i, _ in reached_cells(used_names(tree), editable))
    return seen


def _orphan_violations(nb: Any, editable: list, kind: str) -> list:
    """Violations in cells no part reaches: only smuggling explains them, so they cost all."""
    reached = _reached_by_parts(nb, editable)
    return [v for v in check_cells(editable, assignment=kind) if v.cell not in reached]


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


def _error_text(cell: Any) -> str:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return f"{out.get('ename', 'Error')}: {str(out.get('evalue', ''))[:200]}"
    return ""


def _forbidden_message(violations: list) -> str:
    listed = "; ".join(str(v) for v in violations[:3])
    more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
    return (
        f"0 points: the solution may not use the package's reference passes or dynamic "
        f"tricks: {listed}{more}. See 'What you may import' at the top of the notebook"
    )


def _rewrite(cell: Any, score: PartScore) -> None:
    """Replace the outputs with: explanation, picture, and the plain float score."""
    from nbformat import from_dict

    outputs = [text_output(score.explain())]
    picture = picture_output(score)
    if picture is not None:
        outputs.append(picture)
    outputs.append(result_output(score.score, cell.get("execution_count")))
    cell.outputs = [from_dict(o) for o in outputs]
