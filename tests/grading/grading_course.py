"""A temporary nbgrader course for the end-to-end grading tests.

It copies ``nbgrader_config.py``, ``solutions/``, chipsim and the grader into a temporary folder,
and runs the real ``nbgrader`` CLI there with ``PYTHONPATH`` pointing at the copy: the
grader's tamper check then watches the copy, never the working tree (where other people may
be editing chipsim at the same moment).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.sandbox.modes import sandbox_mode

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


#: Where this machine cannot sandbox kernels the end-to-end tests still grade, unsandboxed
#: by the instructor's explicit choice (and the isolation tests skip, saying why).
NO_SANDBOX = sandbox_mode() is None


def make_course(tmp: Path) -> Path:
    """A fresh course folder (its gradebook holds only the course secret) with a private copy
    of chipsim."""
    course = tmp / "course"
    course.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", course)
    if NO_SANDBOX:
        with (course / "nbgrader_config.py").open("a") as f:
            f.write("\n# tests on a machine without namespaces: grade unsandboxed, explicitly\n")
            f.write("c.GuardedExecute.allow_unsandboxed = True\n")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    for package in ("chipsim", "grader"):
        shutil.copytree(
            ROOT / package, course / "pkg" / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    # A fixed course secret, so the hidden instances (and the solution notebook's score on them)
    # are the same on every run; test_grading_hidden.py tests the secret made on first use.
    (course / "gradebook").mkdir(mode=0o700)
    key = course / "gradebook" / "hidden_instances.key"
    key.write_bytes(hashlib.sha256(b"chipsim test course").digest())
    key.chmod(0o600)
    return course


def make_sandbox_course(tmp: Path) -> Path:
    """A course graded in the sandbox (every course is: the kernel sees none of its files)."""
    return make_course(Path(tmp))


def course_env(course: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # nbgrader needs alembic on PATH
    env["PYTHONPATH"] = str(course / "pkg")
    return env


def nbgrader(course: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = course_env(course)
    return subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def submit_notebook(course: Path, assignment: str, student: str, nb) -> None:
    folder = course / "gradebook" / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


def grades(course: Path, assignment: str) -> dict[str, dict[str, float]]:
    """student -> {grade_id: auto score} from the course's gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{course / 'gradebook' / 'gradebook.db'}") as gb:
        for student in gb.students:
            try:
                sub = gb.find_submission(assignment, student.id)
            except MissingEntry:  # this student submitted other assignments only
                continue
            out[student.id] = {g.name: g.auto_score for g in sub.notebooks[0].grades}
    return out


def mix(released, solution, solved: set[str], replace: dict[str, str] | None = None):
    """The released notebook with the solution cells of ``solved`` parts filled in.

    ``replace`` maps a solution cell's grade id to a source written by the test.
    """
    nb = nbformat.from_dict(released)
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if replace and gid in replace:
            cell.source = replace[gid]
        elif gid in solved:
            cell.source = sources[gid]
    return nb
