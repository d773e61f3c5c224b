"""Autograde every submission in parallel: a pool of long-lived nbgrader workers.

One worker (:mod:`.worker`, nbgrader's own ``AutogradeApp`` looping over requests) runs per
core. The submissions wait in one queue, heaviest first (by the bytes of the submitted
notebook), and a worker takes the next one as soon as it has finished the last: no core idles
while work is left, and the run ends at most about one notebook after the ideal. nbgrader's
start-up (imports, config, the chipsim snapshot, the reference baselines) is paid once per
worker. With several workers, each worker's BLAS gets ``cores // workers`` threads (unless the
environment already says), so the pool does not oversubscribe the cores.

The course's gradebook is one sqlite file shared by the workers. Each write waits for the
lock (``nbgrader_config.py`` gives the database URL ``?timeout=120``), so no grade is lost
to "database is locked"; no grade is duplicated because nbgrader keys a submission by
(assignment, student) and each submission is handed to exactly one worker. After the pool
finishes, every job is *verified* in the gradebook (one submission, a score on every graded
cell, the autograded notebook on disk); a job that fails verification (its worker crashed,
say) is graded again, alone, by a fresh ``nbgrader autograde`` process.

Before the pool starts, the assignments and students are entered in the gradebook by one
process, so the workers never race to create the same rows.

Only what changed is graded (:mod:`.ledger`): a submission whose bytes (and the grader's) are
those of its last successful grading is skipped and reported as unchanged; a changed one is
graded again (nbgrader's ``--force`` for that job); ``force=True`` regrades everything. A
submission the grader cannot read (a link, not a notebook, too large, nested too deep) is not
graded and is listed with the reason. The workers run in sessions of their own, apart from
``make grade``'s; the kernels in namespaces of their own (:mod:`.sandbox`).

Example (from the course root; ``make grade`` does this and then exports)::

    python -m chipsim.grading.cli grade --workers 2
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from chipsim.errors import ChipsimError
from chipsim.grading.jobs import Job, find_jobs, folder, job_key, order_jobs
from chipsim.grading.jobs import digests as content_digests
from chipsim.grading.ledger import Ledger, check_submission

__all__ = ["Job", "find_jobs", "grade_all", "job_key", "order_jobs"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one job went: the return code, tries, and nbgrader's last lines when it failed."""

    job: Job
    returncode: int
    tries: int
    log: str = ""


@dataclass(frozen=True, slots=True)
class GradeRun:
    """One run: the jobs graded (in (assignment, student) order), those skipped as unchanged,
    and those not graded: failed verification (``missing``) or refused (``rejected``: why)."""

    outcomes: tuple[Outcome, ...]
    missing: tuple[Job, ...] = field(default=())
    skipped: tuple[Job, ...] = field(default=())
    rejected: tuple[tuple[Job, str], ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.missing and not self.rejected

    def not_graded(self) -> dict[tuple[str, str], str]:
        """(student, assignment) -> why it has no grade from this run."""
        out = {(j.student, j.assignment): why for j, why in self.rejected}
        logs = {o.job: o.log for o in self.outcomes}
        for job in self.missing:
            tail = logs.get(job, "").strip().splitlines()
            out[(job.student, job.assignment)] = f"grading failed: {tail[-1] if tail else '?'}"
        return out


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
        cmd, cwd=course, env=_env(env), capture_output=True, text=True, check=False,
        start_new_session=True,
    )  # fmt: skip
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


#: The variables that size numpy's BLAS thread pools (OpenBLAS, MKL, OpenMP builds).
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")


def worker_env(env: dict[str, str] | None, workers: int) -> dict[str, str]:
    """The workers' environment: with several workers, each gets its share of the cores for
    BLAS threads (one worker keeps the default: all cores)."""
    out = _env(env)
    if workers > 1:
        threads = str(max(1, (os.cpu_count() or 1) // workers))
        for var in BLAS_THREADS:
            out.setdefault(var, threads)
    return out


#: Fresh workers one pool thread may start after its worker died (then it stops; the jobs
#: left in the queue are graded by the other threads, or at the end by :func:`grade_one`).
RESTARTS = 2


class _Queue:
    """The shared job queue (a list under a lock; the pool threads pop from its front)."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.jobs, self.lock = list(jobs), threading.Lock()

    def pop(self) -> Job | None:
        with self.lock:
            return self.jobs.pop(0) if self.jobs else None


#: The command that starts one worker (:mod:`.worker`); the pool appends nbgrader's arguments.
WORKER = (sys.executable, "-m", "chipsim.grading.worker")


def _start_worker(course: Path, cmd: Sequence[str], env: dict[str, str], log) -> subprocess.Popen:
    return subprocess.Popen(
        list(cmd), cwd=course, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
        text=True, bufsize=1, start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None:
        return
    try:
        proc.stdin.close()
        proc.wait(timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


def drain(
    course: Path, queue: _Queue, cmd: Sequence[str], env: dict[str, str], on_done=None
) -> list[Outcome]:
    """One pool thread: a worker process (``cmd``) grading jobs from ``queue`` until it is
    empty. A worker that dies is replaced (at most :data:`RESTARTS` times); its job fails."""
    outcomes: list[Outcome] = []
    with tempfile.TemporaryFile("w+") as log:  # the worker's stderr: nbgrader's log
        proc, restarts = None, 0
        while (job := queue.pop()) is not None:
            if proc is None:
                proc = _start_worker(course, cmd, env, log)
            reply = _ask(proc, job)
            if reply is None:  # the worker died (killed, out of memory) or garbled its reply
                proc.kill()
                code = proc.wait()
                log.seek(0)
                tail = log.read()[-3000:]
                outcomes.append(Outcome(job, code or 1, 1, f"the worker stopped:\n{tail}"))
                proc, restarts = None, restarts + 1
            else:
                outcomes.append(Outcome(job, 0 if reply.get("ok") else 1, 1, reply.get("log", "")))
            if on_done:
                on_done(job)
            if restarts > RESTARTS:
                break
        _stop(proc)
    return outcomes


def _ask(proc: subprocess.Popen, job: Job) -> dict | None:
    """Send one job; the worker's reply, or None when it died before answering."""
    try:
        proc.stdin.write(json.dumps({"student": job.student, "assignment": job.assignment}) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
    except (BrokenPipeError, OSError):
        return None
    try:
        reply = json.loads(line)
    except ValueError:
        return None
    same = reply.get("student") == job.student and reply.get("assignment") == job.assignment
    return reply if same else None


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
    worker: Sequence[str] = WORKER,
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
        worker: the command of one worker, to which the nbgrader arguments are appended.
    """
    course = Path(course)
    everything = find_jobs(course, assignments)
    ledger = Ledger.load(course)
    digests = content_digests(course, everything, _env(env))
    rejected, jobs, skipped = [], [], []
    for job in everything:
        why = check_submission(folder(course, job))
        if why:
            rejected.append((job, why))
            ledger.record(job_key(job), digests[job], "not graded", why)
        elif not force and ledger.unchanged(job_key(job), digests[job]):
            skipped.append(job)
        else:
            jobs.append(job)
    if not jobs:
        ledger.save(course)
        return GradeRun((), (), tuple(skipped), tuple(rejected))
    prepare(course, jobs, env)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    bar = Progress(len(jobs), enabled=progress)
    queue = _Queue(order_jobs(course, jobs))
    cmd = [*worker, "--force", *extra]  # the ledger decided: these are to be (re)graded
    wenv = worker_env(env, workers)
    outcomes: dict[Job, Outcome] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(
                drain, course, queue, cmd, wenv,
                lambda job: bar.step(f"{job.student}/{job.assignment}"),
            )
            for _ in range(workers)
        ]  # fmt: skip
        for fut in as_completed(futures):
            for out in fut.result():
                outcomes[out.job] = out
    bar.close()
    for job in jobs:  # left in the queue when every worker had died: graded below
        outcomes.setdefault(job, Outcome(job, 1, 0, "not graded by the pool"))
    failed = {j for j in jobs if outcomes[j].returncode != 0}
    unverified = set(verify(course, jobs))
    missing = [j for j in jobs if j in failed or j in unverified]
    for job in missing:  # alone now: whatever went wrong was not the student's fault
        out = grade_one(course, job, force=True, extra=extra, env=env)
        outcomes[job] = Outcome(job, out.returncode, outcomes[job].tries + 1, out.log)
    missing = verify(course, missing) if missing else []
    for job in jobs:  # the one place outcomes are written to the ledger
        if job in missing:
            ledger.record(job_key(job), digests[job], "not graded", outcomes[job].log[-500:])
        else:
            ledger.record(job_key(job), digests[job], "graded")
    ledger.save(course)
    return GradeRun(
        tuple(outcomes[j] for j in jobs), tuple(missing), tuple(skipped), tuple(rejected)
    )


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
