"""Autograde every submission in parallel: a pool of ``nbgrader autograde`` processes.

The students are split into one share per worker, of about equal work (largest first onto the
least loaded share, by the bytes of their submitted notebooks); each worker is *one*
``nbgrader autograde '*'`` process that grades every assignment of its students (the others
are excluded with ``--CourseDirectory.student_id_exclude``). So the grader's per-process work
(imports, the chipsim snapshot, the reference baselines) is paid once per worker, not once per
assignment or notebook, and no worker waits for another between assignments. (When only some
of the submitted assignments are asked for, each share is one process per assignment.)

The course's gradebook is one sqlite file shared by the workers. Each write waits for the
lock (``nbgrader_config.py`` gives the database URL ``?timeout=120``), so no grade is lost
to "database is locked"; no grade is duplicated because nbgrader keys a submission by
(assignment, student) and each student is in exactly one share. After the pool finishes,
every job (one student's notebook) is *verified* in the gradebook (one submission, a score
on every graded cell, the autograded notebook on disk); a job that fails verification is
graded again, alone.

Before the pool starts, the assignments and students are entered in the gradebook by one
process, so the workers never race to create the same rows.

Example (from the course root; ``make grade`` does this and then exports)::

    python -m chipsim.grading.parallel --workers 2
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from chipsim.errors import ChipsimError


@dataclass(frozen=True, slots=True)
class Job:
    """One submitted notebook to autograde."""

    student: str
    assignment: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one job went: the return code, tries, and nbgrader's last lines when it failed."""

    job: Job
    returncode: int
    tries: int
    log: str = ""


@dataclass(frozen=True, slots=True)
class GradeRun:
    """All jobs of one run, in (assignment, student) order, and which failed verification."""

    outcomes: tuple[Outcome, ...]
    missing: tuple[Job, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.missing


def find_jobs(course: Path, assignments: Sequence[str] | None = None) -> list[Job]:
    """Every ``gradebook/submitted/<student>/<assignment>/`` folder with a notebook."""
    root = Path(course) / "gradebook" / "submitted"
    jobs = []
    for student in sorted(p for p in root.glob("*") if p.is_dir()):
        for folder in sorted(p for p in student.glob("*") if p.is_dir()):
            if (assignments is None or folder.name in assignments) and any(folder.glob("*.ipynb")):
                jobs.append(Job(student.name, folder.name))
    return sorted(jobs, key=lambda j: (j.assignment, j.student))


def db_url(course: Path) -> str:
    return f"sqlite:///{Path(course) / 'gradebook' / 'gradebook.db'}?timeout=120"


def nbgrader_command(course: Path, *args: str) -> list[str]:
    exe = Path(sys.executable).parent / "nbgrader"
    return [str(exe) if exe.exists() else "nbgrader", *args]


def _env(env: dict[str, str] | None) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    bindir = str(Path(sys.executable).parent)  # nbgrader needs alembic on PATH
    out["PATH"] = f"{bindir}{os.pathsep}{out.get('PATH', '')}"
    return out


def prepare(course: Path, jobs: Sequence[Job], env: dict[str, str] | None = None) -> None:
    """Enter the assignments (from ``solutions/``) and the students in the gradebook, once."""
    from nbgrader.api import Gradebook, MissingEntry

    (Path(course) / "gradebook").mkdir(exist_ok=True)
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
        cmd, cwd=course, env=_env(env), capture_output=True, text=True, check=False
    )
    if done.returncode != 0 and "generate_assignment" in cmd:
        raise ChipsimError(f"`{' '.join(cmd[-3:])}` failed:\n{done.stderr[-2000:]}")
    return done


def grade_one(
    course: Path, job: Job, *, force: bool, extra: Sequence[str] = (), env=None
) -> Outcome:
    """``nbgrader autograde <assignment> --student <student>`` in its own process."""
    cmd = nbgrader_command(course, "autograde", job.assignment, "--student", job.student)
    cmd += [*(["--force"] if force else []), *extra]
    done = _run(course, cmd, env)
    log = "" if done.returncode == 0 else (done.stdout + done.stderr)[-3000:]
    return Outcome(job, done.returncode, 1, log)


def grade_share(
    course: Path,
    assignment: str,
    share: Sequence[Job],
    everyone: Sequence[str],
    *,
    force: bool,
    extra: Sequence[str] = (),
    env=None,
    on_notebook=None,
) -> list[Outcome]:
    """One ``nbgrader autograde <assignment>`` process for the jobs in ``share``.

    ``assignment`` may be ``"*"`` (every assignment of the share's students); the students of
    ``everyone`` who are not in the share are excluded.
    """
    mine = {j.student for j in share}
    others = [s for s in everyone if s not in mine]
    cmd = nbgrader_command(course, "autograde", assignment)
    if others:
        cmd.append(f"--CourseDirectory.student_id_exclude={','.join(others)}")
    cmd += [*(["--force"] if force else []), *extra]
    proc = subprocess.Popen(
        cmd, cwd=course, env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    lines, started = [], 0
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if "Autograding " in line:
            if started and on_notebook:
                on_notebook()  # the previous notebook is done
            started += 1
    code = proc.wait()
    if started and on_notebook:
        on_notebook()
    log = "" if code == 0 else "".join(lines)[-3000:]
    return [Outcome(job, code, 1, log) for job in share]


def split_students(course: Path, jobs: Sequence[Job], workers: int) -> list[list[Job]]:
    """The jobs in ``workers`` shares of whole students, of about equal work.

    A student's work is estimated by the bytes of their submitted notebooks (a notebook's
    grading time grows with what it holds); the heaviest student goes first onto the lightest
    share (longest processing time first), so the workers finish close together. Ties break
    on the student id, so the split is deterministic.
    """
    root = Path(course) / "gradebook" / "submitted"
    cost: dict[str, int] = {}
    for job in jobs:
        folder = root / job.student / job.assignment
        size = sum(p.stat().st_size for p in folder.glob("*.ipynb"))
        cost[job.student] = cost.get(job.student, 0) + size
    shares: list[list[str]] = [[] for _ in range(max(1, min(workers, len(cost))))]
    loads = [0] * len(shares)
    for student in sorted(cost, key=lambda s: (-cost[s], s)):
        k = min(range(len(shares)), key=lambda i: (loads[i], i))
        shares[k].append(student)
        loads[k] += cost[student]
    return [[j for j in jobs if j.student in names] for names in map(set, shares) if names]


def verify(course: Path, jobs: Sequence[Job]) -> list[Job]:
    """The jobs whose grades are not all in the gradebook exactly once (or not on disk)."""
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


def grade_all(
    course: Path,
    *,
    workers: int | None = None,
    assignments: Sequence[str] | None = None,
    force: bool = False,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
    progress: bool = True,
) -> GradeRun:
    """Autograde every submission under ``gradebook/submitted`` with ``workers`` processes.

    Args:
        course: the course root (holds ``nbgrader_config.py``).
        workers: parallel nbgrader processes (default: the machine's cores).
        assignments: only these assignments (default: all submitted).
        force: regrade notebooks already graded (nbgrader skips them otherwise).
        extra: more ``nbgrader autograde`` arguments, e.g. ``["--GuardedExecute.timeout=30"]``.
        env: the environment of the nbgrader processes (default: this process's).
        progress: draw a progress bar on stderr.
    """
    course = Path(course)
    jobs = find_jobs(course, assignments)
    if not jobs:
        return GradeRun(())
    prepare(course, jobs, env)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    bar = Progress(len(jobs), enabled=progress)
    outcomes: dict[Job, Outcome] = {}
    everyone = sorted({j.student for j in jobs})
    wanted = sorted({j.assignment for j in jobs})
    tasks = []  # (assignment or "*", the share's jobs)
    for share in split_students(course, jobs, workers):
        if wanted == sorted({j.assignment for j in find_jobs(course)}):
            tasks.append(("*", share))  # one process grades all of the share's assignments
        else:  # a subset was asked for: nbgrader takes one assignment (or "*") per process
            for a in wanted:
                part = [j for j in share if j.assignment == a]
                if part:
                    tasks.append((a, part))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(
                grade_share, course, a, share, everyone, force=force, extra=extra, env=env,
                on_notebook=lambda a=a: bar.step("all assignments" if a == "*" else a),
            )
            for a, share in tasks
        ]  # fmt: skip
        for fut in as_completed(futures):
            for out in fut.result():
                outcomes[out.job] = out
    bar.close()
    missing = verify(course, jobs)
    for job in missing:  # alone now: whatever went wrong was not the student's fault
        out = grade_one(course, job, force=True, extra=extra, env=env)
        outcomes[job] = Outcome(job, out.returncode, outcomes[job].tries + 1, out.log)
    missing = verify(course, missing) if missing else []
    return GradeRun(tuple(outcomes[j] for j in jobs), tuple(missing))


class Progress:
    """A one-line text progress bar (``[#####-----] 12/40 alice/fusion``) on stderr."""

    def __init__(self, total: int, *, enabled: bool = True, width: int = 30) -> None:
        self.total, self.done, self.width, self.enabled = total, 0, width, enabled
        self.start = time.monotonic()  # only for the ETA shown to a person, never in results
        self.lock = threading.Lock()  # workers' threads step it

    def step(self, label: str) -> None:
        with self.lock:
            self.done = min(self.total, self.done + 1)
            if self.enabled:
                self._draw(label)

    def _draw(self, label: str) -> None:
        filled = self.width * self.done // max(1, self.total)
        rate = (time.monotonic() - self.start) / self.done
        eta = rate * (self.total - self.done)
        bar = "#" * filled + "-" * (self.width - filled)
        sys.stderr.write(
            f"\r[{bar}] {self.done}/{self.total} graded, ~{eta:4.0f} s left  {label[:30]:30}"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")


def copy_demo_submissions(course: Path, demos: Path) -> int:
    """Copy ``demos/<student>/<assignment>/*.ipynb`` into an *empty* ``gradebook/submitted``."""
    target = Path(course) / "gradebook" / "submitted"
    if target.exists() and any(target.iterdir()):
        return 0
    shutil.copytree(demos, target, dirs_exist_ok=True)
    return len(list(target.glob("*/*/*.ipynb")))
