"""The job list: one job per submitted notebook folder, with an identity and a content digest.

A job is (learner, assignment); its key ``learner/assignment`` names it in the ledger
(:mod:`.ledger`) and, when grading spreads over machines, across them. Its digest is the
sha256 of the submitted notebooks under the grader's own digest, so equal digests mean
"graded from exactly these bytes by exactly this grader".

Example:
    >>> job_key(Job("ada", "fusion"))
    'ada/fusion'
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chipsim.errors import ChipsimError
from grader.gradebook.ledger import submission_digest

#: Characters a learner id may not have: nbgrader reads ``--student`` as a glob pattern (and
#: the exchange parses ids out of folder names), so these could match another learner.
ID_FORBIDDEN = frozenset("*?[]{}!/\\:|<>\"'`$;&")


def check_student_id(student: str) -> str:
    """``student`` if it is a safe learner id, else a :class:`ChipsimError` saying why.

    Letters of any script are fine (ids that merely look alike are a warning of the
    leaderboard's); pattern characters, spaces and control characters are not.

    Example:
        >>> check_student_id("ada.lovelace")
        'ada.lovelace'
        >>> check_student_id("*")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        chipsim.errors.ChipsimError: learner id '*': ...
    """
    bad = sorted({c for c in student if c in ID_FORBIDDEN or not c.isprintable() or c.isspace()})
    if not student or bad or student.startswith((".", "-")) or len(student) > 64:
        shown = "".join(bad) or student[:1]
        raise ChipsimError(
            f"learner id {student!r}: {shown!r} is a character nbgrader would read as a "
            "pattern or cannot store; use letters, digits and _ . - @ + only"
        )
    return student


@dataclass(frozen=True, slots=True)
class Job:
    """One submitted notebook to autograde."""

    student: str
    assignment: str


def job_key(job: Job) -> str:
    """The job's identity in the ledger (and, later, across machines)."""
    return f"{job.student}/{job.assignment}"


def find_jobs(course: Path, assignments: Sequence[str] | None = None) -> list[Job]:
    """Every ``gradebook/submitted/<student>/<assignment>/`` folder with a notebook."""
    root = Path(course) / "gradebook" / "submitted"
    jobs = []
    for student in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        for folder in sorted(p for p in student.iterdir() if p.is_dir()):
            if (assignments is None or folder.name in assignments) and any(folder.glob("*.ipynb")):
                jobs.append(Job(student.name, folder.name))
    return sorted(jobs, key=lambda j: (j.assignment, j.student))


def order_jobs(course: Path, jobs: Sequence[Job]) -> list[Job]:
    """The jobs heaviest first, by the bytes of their submitted notebooks.

    A notebook's grading time grows with what it holds; taking the longest jobs first
    (longest processing time first) leaves only short ones for the end, so the workers
    finish close together. Ties break on (assignment, student): the order is deterministic.
    """
    root = Path(course) / "gradebook" / "submitted"

    def size(job: Job) -> int:
        return sum(p.lstat().st_size for p in (root / job.student / job.assignment).glob("*.ipynb"))

    return sorted(jobs, key=lambda j: (-size(j), j.assignment, j.student))


def folder(course: Path, job: Job) -> Path:
    return Path(course) / "gradebook" / "submitted" / job.student / job.assignment


def digests(course: Path, jobs: Sequence[Job], env: dict[str, str]) -> dict[Job, str]:
    """Each job's content digest: its submitted notebooks under the grader's own digest.

    The grader's side is computed in a process configured like the workers (the same course
    config and package), so that it names the package the workers will grade with."""
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from traitlets.config.loader import PyFileConfigLoader\n"
        "from grader.problems.hidden import HiddenInstances, fingerprint\n"
        "from grader.gradebook.ledger import grader_digest\n"
        "from grader.sandbox.modes import package_dir\n"
        "course = Path(sys.argv[1])\n"
        "loader = PyFileConfigLoader('nbgrader_config.py', path=str(course))\n"
        "secret = HiddenInstances(config=loader.load_config()).secret()\n"
        "print(json.dumps({a: grader_digest(course, a, package_dir(), fingerprint(secret))\n"
        "                  for a in sys.argv[2:]}))\n"
    )
    names = sorted({j.assignment for j in jobs})
    if not names:
        return {}
    done = subprocess.run(
        [sys.executable, "-c", code, str(course), *names], cwd=course, env=env,
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ChipsimError(f"cannot compute the grader's digest:\n{done.stderr[-2000:]}")
    grader = json.loads(done.stdout.strip().splitlines()[-1])
    return {j: submission_digest(folder(course, j), grader[j.assignment]) for j in jobs}
