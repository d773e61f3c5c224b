"""The released notebooks, and the learner's copies of them: which is which, and who may write.

nbgrader generates the release (the notebooks without solutions) into its release folder. That
folder is the grader's own, ``gradebook/release/`` (:data:`RELEASE`), where no learner works:
grading regenerates it whenever a gradebook is new, and nothing a learner wrote is ever there.
The committed copy learners start from is ``exercises/<assignment>/``; learners also work in
``my-work/<assignment>/`` (where JupyterLab's Assignments tab fetches). Those two folders are
the learner's: no course command writes a file in them that differs from the release.

* :func:`changed_by_learner` tells a notebook the learner edited from the release;
* :func:`publish` copies the fresh release into ``exercises/`` — and refuses, naming the file,
  when that would overwrite a learner's edits;
* :func:`learner_notebooks` finds the notebook of each assignment a learner worked on (for
  ``make grade-mine``), and says which one it took and why.

Example:
    >>> import tempfile, pathlib
    >>> course = pathlib.Path(tempfile.mkdtemp())
    >>> (course / "gradebook" / "release" / "demo").mkdir(parents=True)
    >>> _ = (course / "gradebook" / "release" / "demo" / "demo.ipynb").write_text("{}")
    >>> publish(course, ["demo"])
    ['exercises/demo/demo.ipynb']
    >>> _ = (course / "exercises" / "demo" / "demo.ipynb").write_text('{"mine": 1}')
    >>> changed_by_learner(course, course / "exercises" / "demo" / "demo.ipynb")
    True
    >>> try:
    ...     publish(course, ["demo"])
    ... except LearnerFilesError as e:
    ...     print(str(e).split(":")[0])
    exercises/demo/demo.ipynb has changes that are not in the release
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chipsim.errors import ChipsimError

#: nbgrader's release folder (``c.CourseDirectory.release_directory``): the grader's own.
RELEASE = Path("gradebook") / "release"
#: Where learners work: the committed starting point, and the Assignments tab's copies.
EXERCISES, MY_WORK = Path("exercises"), Path("my-work")


class LearnerFilesError(ChipsimError):
    """A course command would have overwritten or deleted a file a learner edited."""


def released(course: Path, assignment: str) -> Path:
    """The freshly generated release of ``assignment`` (nbgrader's release folder)."""
    return Path(course) / RELEASE / assignment / f"{assignment}.ipynb"


def committed(course: Path, path: Path) -> bytes | None:
    """``path``'s bytes as last committed in the course's git repository, or None (not a
    repository, no git, or not committed)."""
    rel = Path(path).resolve().relative_to(Path(course).resolve())
    try:
        done = subprocess.run(
            ["git", "-C", str(course), "show", f"HEAD:{rel.as_posix()}"],
            capture_output=True, check=False, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def changed_by_learner(course: Path, path: Path) -> bool | None:
    """Does the notebook at ``path`` hold edits that are in neither the committed nor the
    freshly generated release? None when there is neither to compare with (no git, no
    release yet); False for a missing file."""
    path = Path(path)
    if not path.is_file():
        return False
    data = path.read_bytes()
    fresh = released(Path(course), path.parent.name)
    known = [committed(course, path), fresh.read_bytes() if fresh.is_file() else None]
    known = [k for k in known if k is not None]
    if not known:
        return None
    return data not in known


def publish(course: Path, assignments: Iterable[str]) -> list[str]:
    """Copy each assignment's fresh release into ``exercises/<assignment>/``.

    Refuses (:class:`LearnerFilesError`, nothing written) when a notebook there holds edits
    that are not in the release: a learner's work is never overwritten. Returns the paths
    written (relative to the course)."""
    course = Path(course)
    names = list(assignments)
    blocked = [
        EXERCISES / a / f"{a}.ipynb"
        for a in names
        if changed_by_learner(course, course / EXERCISES / a / f"{a}.ipynb") is not False
    ]
    if blocked:
        shown = ", ".join(p.as_posix() for p in blocked)
        raise LearnerFilesError(
            f"{shown} has changes that are not in the release: publishing the release would "
            "overwrite them. Move your work elsewhere (my-work/<assignment>/ is the place) or "
            "commit it, then run `make exercises` again."
        )
    written = []
    for a in names:
        target = course / EXERCISES / a / f"{a}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(released(course, a), tmp)
        os.replace(tmp, target)
        written.append(target.relative_to(course).as_posix())
    return written


@dataclass(frozen=True)
class Choice:
    """The notebook a learner worked on for one assignment, and why it was chosen."""

    assignment: str
    path: Path | None
    why: str


def learner_notebooks(course: Path, assignments: Iterable[str]) -> list[Choice]:
    """For each assignment, the notebook to grade: the one that holds the learner's edits, the
    Assignments tab's copy in ``my-work/`` or the one in ``exercises/``; when both hold
    edits, the one saved last; when neither does, the blank (``my-work/`` first). The reason
    says which and why."""
    course = Path(course)
    out = []
    for a in assignments:
        mine = course / MY_WORK / a / f"{a}.ipynb"
        ex = course / EXERCISES / a / f"{a}.ipynb"
        edited = [
            p for p in (mine, ex) if p.is_file() and changed_by_learner(course, p) is not False
        ]
        if len(edited) == 2:
            newer = max(edited, key=lambda p: p.stat().st_mtime)
            older = ex if newer == mine else mine
            why = (
                f"both {_rel(course, mine)} and {_rel(course, ex)} hold your edits: your work "
                f"is the one saved last, {_rel(course, newer)} (not {_rel(course, older)})"
            )
            out.append(Choice(a, newer, why))
        elif edited:
            out.append(Choice(a, edited[0], f"your work is {_rel(course, edited[0])}"))
        elif mine.is_file() or ex.is_file():
            path = mine if mine.is_file() else ex
            out.append(Choice(a, path, f"no edits yet: the blank {_rel(course, path)} "
                                       "stands for your work (it scores 0)"))  # fmt: skip
        else:
            out.append(Choice(a, None, f"no notebook for {a} in my-work/ or exercises/"))
    return out


def _rel(course: Path, path: Path) -> str:
    return Path(path).relative_to(course).as_posix()
