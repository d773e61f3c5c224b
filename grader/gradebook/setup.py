"""The gradebook side of a grading run: its URL, its tables and rows, and the check of grades.

- :func:`open_records` creates nbgrader's tables and then the grading records
  (:mod:`~grader.gradebook.records`), once, under a lock (shards start together);
- :func:`prepare` enters the assignments (``nbgrader generate_assignment``) and the learners;
- :func:`verify` says which jobs do not have all their grades in the gradebook (and their
  autograded notebooks on disk).

Every step waits for a database that went away for a moment (:func:`~grader.gradebook.db.retrying`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from chipsim.errors import ChipsimError
from grader.gradebook import db as gradebook_db
from grader.gradebook.jobs import Job
from grader.gradebook.records import Store


def db_url(course: Path) -> str:
    """The course's gradebook URL (:func:`~grader.gradebook.db.db_url`)."""
    return gradebook_db.db_url(course)


def nbgrader_command(course: Path, *args: str) -> list[str]:
    exe = Path(sys.executable).parent / "nbgrader"
    return [str(exe) if exe.exists() else "nbgrader", *args]


def _env(env: dict[str, str] | None) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    bindir = str(Path(sys.executable).parent)  # nbgrader needs alembic on PATH
    out["PATH"] = f"{bindir}{os.pathsep}{out.get('PATH', '')}"
    return out


def prepare(course: Path, jobs: Sequence[Job], env: dict[str, str] | None = None) -> None:
    """Enter the assignments (from ``solutions/``) and the students in the gradebook, once
    (one process at a time: shards start together)."""
    with gradebook_db.exclusive(db_url(course), "chipsim-prepare", course):
        gradebook_db.retrying(
            lambda: _prepare(course, jobs, env), "entering assignments and students"
        )


def open_records(course: Path) -> Store:
    """The gradebook's tables (nbgrader's, then the grading records), created once."""
    from nbgrader.api import Gradebook

    url = db_url(course)
    (Path(course) / "gradebook").mkdir(exist_ok=True)
    with gradebook_db.exclusive(url, "chipsim-prepare", course):
        gradebook_db.retrying(lambda: Gradebook(url).close(), "opening the gradebook")
        store = Store(url)
        store.create()
    return store


def _prepare(course: Path, jobs: Sequence[Job], env: dict[str, str] | None) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(db_url(course)) as gb:
        missing = []
        for name in sorted({j.assignment for j in jobs}):
            try:
                if not gb.find_assignment(name).notebooks:
                    missing.append(name)
            except MissingEntry:
                missing.append(name)
    for name in missing:  # generate_assignment records the notebooks and their locked cells
        _run(course, nbgrader_command(course, "generate_assignment", name, "--force"), env)
    with Gradebook(db_url(course)) as gb:
        for student in sorted({j.student for j in jobs}):
            gb.update_or_create_student(student)


def _run(course: Path, cmd: list[str], env: dict[str, str] | None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        cmd, cwd=course, env=_env(env), capture_output=True, text=True, check=False,
        start_new_session=True,
    )  # fmt: skip
    if done.returncode != 0 and "generate_assignment" in cmd:
        raise ChipsimError(f"`{' '.join(cmd[-3:])}` failed:\n{done.stderr[-2000:]}")
    return done


def verify(course: Path, jobs: Sequence[Job]) -> list[Job]:
    """The jobs whose grades are not all in the gradebook exactly once (or not on disk)."""
    return gradebook_db.retrying(lambda: _verify(course, jobs), "verifying grades")


def _verify(course: Path, jobs: Sequence[Job]) -> list[Job]:
    from nbgrader.api import Gradebook, MissingEntry

    bad = []
    with Gradebook(db_url(course)) as gb:
        for job in jobs:
            try:
                sub = gb.find_submission(job.assignment, job.student)
            except MissingEntry:
                bad.append(job)
                continue
            source = gb.find_assignment(job.assignment)
            for nb in source.notebooks:
                graded = Path(course) / "gradebook" / "autograded" / job.student
                path = graded / job.assignment / f"{nb.name}.ipynb"
                wanted = sorted(c.name for c in nb.grade_cells)
                got = [g for g in sub.notebooks if g.name == nb.name]
                names = sorted(g.name for g in got[0].grades) if len(got) == 1 else []
                # (a test cell the learner deleted has a grade row without an auto score)
                if names != wanted or not path.exists():
                    bad.append(job)
                    break
    return bad
