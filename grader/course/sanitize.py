"""Before nbgrader looks at a submission: the instructor's cells are restored, not trusted.

A learner can change anything in the file they submit, including the nbgrader metadata of a
test cell (``"grade": false``, other points, a new ``grade_id``) or delete the cell. nbgrader
then stops the whole notebook ("Inconsistent checksums for cell ...", a missing gradebook
entry) and the learner's grade is lost. :class:`RestoreTestCells` runs first among the
sanitizing steps and puts back, from the course's source notebook:

* the nbgrader metadata (``grade``, ``solution``, ``locked``, ``task``, ``points``) of every
  cell whose ``grade_id`` the source notebook has;
* every test cell the learner deleted, after the cell that precedes it in the source;
* nothing of the learner's own cells that merely *claim* a ``grade_id`` the course does not
  have: their nbgrader metadata is dropped (they are ordinary cells).

What it restored is listed in ``nb.metadata["chipsim"]["restored"]``; the feedback of those
cells says so (:mod:`grader.course.rescore`). nbgrader's own ``OverwriteCells``
then restores the sources as usual.

:class:`RememberLanguage` runs before nbgrader clears the outputs: it keeps the language the
learner's own kernel wrote its answers in (``set_language``, ``CHIPSIM_LANG``, the notebook's
language or their locale: :mod:`chipsim.i18n`), or, when no answer says, the language the
notebook itself names, so that the feedback speaks it without any call in the notebook
(``nb.metadata["chipsim"]["language"]``, passed to the grading kernel and used by the grader).

Register them in ``nbgrader_config.py``::

    c.Autograde.sanitize_preprocessors = [RememberLanguage, ClearOutput, DeduplicateIds,
                                          RestoreTestCells, OverwriteKernelspec,
                                          OverwriteCells, CheckCellMetadata]
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from chipsim.i18n import spoken
from grader.scoring.answer import MIME

#: The metadata keys that decide how nbgrader treats a cell.
KEYS = ("grade", "solution", "locked", "task", "points", "schema_version")


def _gid(cell: Any) -> Any:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def _is_test(cell: Any) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return bool(meta.get("grade")) and not meta.get("solution")


def restore(nb: Any, source: Any) -> list[str]:
    """Restore ``nb``'s nbgrader cells from ``source`` (see the module docstring); the ids."""
    original = {_gid(c): c for c in source.cells if _gid(c)}
    restored: list[str] = []
    for cell in nb.cells:
        meta = cell.get("metadata", {})
        gid = _gid(cell)
        if "nbgrader" in meta and (not isinstance(gid, str) or gid not in original):
            # the learner's cell, whatever it claims (or a duplicate whose metadata
            # DeduplicateIds emptied: nbgrader would stop on it as "old metadata format")
            del meta["nbgrader"]
            continue
        if gid is None:
            continue
        want = original[gid].metadata["nbgrader"]
        have = cell.metadata["nbgrader"]
        if any(have.get(k) != want.get(k) for k in KEYS):
            cell.metadata["nbgrader"] = {**have, **{k: want[k] for k in KEYS if k in want}}
            restored.append(gid)
    present = {_gid(c) for c in nb.cells}
    for k, cell in enumerate(source.cells):
        gid = _gid(cell)
        if gid and _is_test(cell) and gid not in present:
            before = [_gid(c) for c in source.cells[:k] if _gid(c) in present]
            at = 1 + max((i for i, c in enumerate(nb.cells) if before and _gid(c) == before[-1]),
                         default=len(nb.cells) - 1)  # fmt: skip
            fresh = copy.deepcopy(cell)
            fresh.outputs, fresh.execution_count = [], None
            nb.cells.insert(at, fresh)
            present.add(gid)
            restored.append(gid)
    return restored


class RestoreTestCells(NbGraderPreprocessor):
    """Restore the instructor's test cells before nbgrader checks them (module docstring)."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        info = resources.get("nbgrader", {})
        coursedir = CourseDirectory(parent=self)
        folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
        path = folder / f"{info['notebook']}.ipynb"
        restored = restore(nb, nbformat.read(path, as_version=4))
        if restored:
            self.log.warning("restored the test cells %s of the course", ", ".join(restored))
        nb.metadata.setdefault("chipsim", {})["restored"] = restored
        return nb, resources


def answered_language(nb: Any) -> str | None:
    """The language of the last answer the learner's own kernel wrote into ``nb``, or None
    (the answers are the learner's data: anything that is not a language chipsim speaks is
    ignored)."""
    found = None
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []) if isinstance(cell, dict) else []:
            data = out.get("data") if isinstance(out, dict) else None
            doc = data.get(MIME) if isinstance(data, dict) else None
            found = spoken(doc.get("language") if isinstance(doc, dict) else None) or found
    return found


class RememberLanguage(NbGraderPreprocessor):
    """Keep the learner's language before nbgrader clears the outputs (module docstring)."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        notes = nb.metadata.setdefault("chipsim", {})
        declared = notes.pop("language", None)  # the notebook's own language (its edition)
        # the answers' record first (the language the learner's kernel spoke), else the
        # notebook's; anything that is not a language chipsim speaks is dropped
        language = answered_language(nb) or spoken(declared)
        if language is not None:
            notes["language"] = language
        return nb, resources
