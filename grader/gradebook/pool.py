"""Autograde every submission in parallel: a pool of long-lived nbgrader workers.

One worker (:mod:`.worker`, nbgrader's own ``AutogradeApp`` looping over requests) runs per
core. The submissions wait in one queue, heaviest first (by the bytes of the submitted
notebook), and a worker takes the next one as soon as it has finished the last: no core idles
while work is left, and the run ends at most about one notebook after the ideal. nbgrader's
start-up (imports, config, the chipsim snapshot, the reference baselines) is paid once per
worker. With several workers, each worker's BLAS gets ``cores // workers`` threads (unless the
environment already says), so the pool does not oversubscribe the cores.

The course's gradebook is one database shared by the workers (:mod:`.db`: the
sqlite file ``gradebook/gradebook.db`` by default, whose writers wait up to 120 s for its
lock; any server ``GRADEBOOK_URL`` names). No grade is duplicated because nbgrader keys a
submission by (assignment, student) and each submission is graded by exactly one worker of
one process: before a worker takes a job the process *claims* it in the database
(:mod:`.claims`), so shards on other machines (``shard="i/N"``, :mod:`.shards`), even two
started with the same index, never grade the same job. Each job's outcome is written to the
ledger as soon as it is verified, so a killed run loses nothing it finished. After the pool
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
``make grade``'s; the kernels in namespaces of their own (:mod:`~grader.sandbox.modes`).

Example (from the course root; ``make grade`` does this and then exports)::

    python -m grader.cli grade --workers 2
"""

from __future__ import annotations

import json
import os
import re
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
from grader.gradebook import db as gradebook_db
from grader.gradebook.claims import LEASE, Claims
from grader.gradebook.jobs import Job, check_student_id, find_jobs, folder, job_key, order_jobs
from grader.gradebook.jobs import digests as content_digests
from grader.gradebook.ledger import Ledger, check_submission
from grader.gradebook.progress import Progress, Summary
from grader.gradebook.records import new_owner
from grader.gradebook.setup import (
    _env,
    _run,
    db_url,
    nbgrader_command,
    open_records,
    prepare,
    verify,
)
from grader.gradebook.shards import Shard

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
    elsewhere: tuple[Job, ...] = field(default=())
    summary: Summary | None = None

    @property
    def ok(self) -> bool:
        return not self.missing and not self.rejected

    def not_graded(self) -> dict[tuple[str, str], str]:
        """(student, assignment) -> why it has no grade from this run."""
        out = {(j.student, j.assignment): why for j, why in self.rejected}
        logs = {o.job: o.log for o in self.outcomes}
        for job in self.missing:
            out[(job.student, job.assignment)] = f"grading failed: {failure(logs.get(job, ''))}"
        return out


#: How a job's log begins when its worker died before answering (:func:`drain`).
WORKER_STOPPED = "the worker stopped (killed, out of memory, or its reply was garbled)"
#: A line that names an exception: ``SandboxError: File exists``, ``DeadKernelError``, a
#: dotted name too; at the start of the line (a traceback's last line is not indented).
_ERROR = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?$")


def failure(log: str) -> str:
    """Why a notebook could not be graded, in one line, from its grading log: the last error
    the log names (nbgrader's closing lines, which only point above, are not a reason).

    >>> failure("Traceback ...\\n  raise X\\nSandboxError: File exists\\n"
    ...         "[AutogradeApp | ERROR] Please see the above traceback")
    'SandboxError: File exists'
    >>> failure("  File x\\nnbclient.exceptions.DeadKernelError\\n")
    'nbclient.exceptions.DeadKernelError'
    >>> failure(WORKER_STOPPED + ":\\n[AutogradeApp | INFO] Converting notebook")
    'the worker stopped (killed, out of memory, or its reply was garbled)'
    >>> failure("")
    'nbgrader reported no error, but no grade was recorded'
    """
    lines = [line.rstrip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR.match(line)]
    if errors:
        return errors[-1]
    if log.startswith(WORKER_STOPPED):
        return WORKER_STOPPED
    plain = [line for line in lines if not line.lstrip().startswith("[")]
    return plain[-1].strip() if plain else "nbgrader reported no error, but no grade was recorded"


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
    """The shared job queue (a list under a lock; the pool threads pop from its front).

    With ``take`` (:meth:`.claims.Claims.take` of a job) a job is handed out only once it is
    this process's: a job another live process holds waits at the back (asked again every
    ``poll`` seconds once nothing else is left); one graded meanwhile goes to ``elsewhere``."""

    def __init__(
        self, jobs: Sequence[Job], take=None, poll: float = 0.5, deadline: float | None = None
    ) -> None:
        self.jobs, self.lock = list(jobs), threading.Lock()
        self.take, self.poll, self.deadline = take, poll, deadline
        self.waiting: list[Job] = []
        self.elsewhere: list[Job] = []
        self.timed_out: list[Job] = []

    def pop(self) -> Job | None:
        while True:
            with self.lock:
                if self.deadline is not None and time.monotonic() > self.deadline:
                    self.timed_out += self.jobs + self.waiting  # the run's time is up
                    self.jobs, self.waiting = [], []
                if not self.jobs and not self.waiting:
                    return None
                job = self.jobs.pop(0) if self.jobs else self.waiting.pop(0)
            if self.take is None:
                return job
            verdict = self.take(job)
            if verdict == "mine":
                return job
            with self.lock:
                (self.elsewhere if verdict == "done" else self.waiting).append(job)
                idle = not self.jobs and verdict != "done"
            if idle:
                time.sleep(self.poll)


#: The command that starts one worker (:mod:`.worker`); the pool appends nbgrader's arguments.
WORKER = (sys.executable, "-m", "grader.gradebook.worker")


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
    course: Path, queue: _Queue, cmd: Sequence[str], env: dict[str, str], on_done=None,
    on_outcome=None,
) -> list[Outcome]:  # fmt: skip
    """One pool thread: a worker process (``cmd``) grading jobs from ``queue`` until it is
    empty. A worker that dies is replaced (at most :data:`RESTARTS` times); its job fails.
    ``on_outcome(outcome)`` and ``on_done(job)`` are called after each job."""
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
                outcomes.append(Outcome(job, code or 1, 1, f"{WORKER_STOPPED}:\n{tail}"))
                proc, restarts = None, restarts + 1
            else:
                outcomes.append(Outcome(job, 0 if reply.get("ok") else 1, 1, reply.get("log", "")))
            if on_outcome:
                on_outcome(outcomes[-1])
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
    shard: Shard | str | None = None,
    lease: float = LEASE,
    seconds: float | None = None,
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
        shard: grade only this share of the learners (``"i/N"``, :mod:`.shards`).
        lease: seconds after which a dead process's claims pass to this one (:mod:`.claims`).
        seconds: the run's time budget: no notebook starts after it, and those left are
            listed as not graded ("the run ran out of time"), to be graded by the next run.
    """
    course, clock = Path(course), time.monotonic()
    shard = Shard.parse(shard) if isinstance(shard, str) else shard
    everything = find_jobs(course, assignments)
    everything = shard.select(everything) if shard else everything
    store = open_records(course)
    owner = new_owner(f"shard {shard}" if shard else "")
    ledger = Ledger.open(course, store, owner)
    digests = content_digests(course, everything, _env(env))
    rejected, jobs, skipped = [], [], []
    for job in everything:
        why = check_submission(folder(course, job)) or _bad_id(job.student)
        if why:
            rejected.append((job, why))
            if ledger.entries.get(job_key(job), {}).get("digest") != digests[job]:
                ledger.record(job_key(job), digests[job], "not graded", why)
        elif not force and ledger.unchanged(job_key(job), digests[job]):
            skipped.append(job)
        else:
            jobs.append(job)
    if not jobs:
        ledger.save(course)
        summary = Summary(0, len(skipped), 0, len(rejected), time.monotonic() - clock)
        return GradeRun((), (), tuple(skipped), tuple(rejected), (), summary)
    prepare(course, jobs, env)
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    bar = Progress(len(jobs), enabled=progress, label=f"shard {shard}" if shard else "")
    cmd = [*worker, "--force", *extra]  # the ledger decided: these are to be (re)graded
    wenv = worker_env(env, workers)
    outcomes: dict[Job, Outcome] = {}
    recorded: set[Job] = set()

    def finished(out: Outcome) -> None:  # record a verified grade at once: a kill loses nothing
        ok = out.returncode == 0 and not verify(course, [out.job])
        if ok:
            ledger.record(job_key(out.job), digests[out.job], "graded")
            recorded.add(out.job)
        bar.step(job_key(out.job), ok)

    with Claims(store, owner, force=force, lease=lease) as claims:
        queue = _Queue(
            order_jobs(course, jobs),
            lambda job: claims.take(job_key(job), digests[job]),
            deadline=None if seconds is None else clock + seconds,
        )
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(drain, course, queue, cmd, wenv, None, finished) for _ in range(workers)
            ]
            for fut in as_completed(futures):
                for out in fut.result():
                    outcomes[out.job] = out
        bar.close()
        late = set(queue.timed_out)
        for job in queue.timed_out:  # never claimed: the next run (or another shard) takes them
            rejected.append((job, f"the grading run ran out of time ({seconds:g} s): not "
                                  "graded this time; run `make grade` again"))  # fmt: skip
        todo = [j for j in jobs if j not in late]
        missing = _grade_the_rest(course, todo, outcomes, recorded, queue, claims, extra, env)
        for job in todo:  # each outcome not yet in the ledger
            if job in missing:
                why = failure(outcomes[job].log)
                ledger.record(job_key(job), digests[job], "not graded", why)
            elif job in outcomes and job not in recorded:
                ledger.record(job_key(job), digests[job], "graded")
    ledger.save(course)
    mine = [j for j in jobs if j in outcomes]
    elsewhere = tuple(j for j in jobs if j not in outcomes and j not in late)
    summary = Summary(
        len(mine) - len(missing), len(skipped), len(elsewhere), len(missing) + len(rejected),
        time.monotonic() - clock,
    )  # fmt: skip
    return GradeRun(
        tuple(outcomes[j] for j in mine), tuple(missing), tuple(skipped), tuple(rejected),
        elsewhere, summary,
    )  # fmt: skip


def _bad_id(student: str) -> str:
    """Why ``student`` cannot be a learner id (nbgrader reads ``--student`` as a pattern)."""
    try:
        check_student_id(student)
    except ChipsimError as exc:
        return str(exc)
    return ""


def _grade_the_rest(course, jobs, outcomes, recorded, queue, claims, extra, env) -> list[Job]:
    """After the pool: grade again, alone, each job of this process that is not recorded
    (its worker died, the database was away); the jobs still without grades."""
    elsewhere = set(queue.elsewhere)
    for job in jobs:  # left in the queue when every worker had died: graded below
        if job not in elsewhere and job not in outcomes:
            if _mine(queue, job):
                outcomes[job] = Outcome(job, 1, 0, "not graded by the pool")
    missing = [j for j in jobs if j in outcomes and j not in recorded]
    if missing:  # the database may have been away: wait for it before grading again
        gradebook_db.wait_until_reachable(db_url(course))
    for job in missing:  # alone now: whatever went wrong was not the student's fault
        out = grade_one(course, job, force=True, extra=extra, env=env)
        outcomes[job] = Outcome(job, out.returncode, outcomes[job].tries + 1, out.log)
    return verify(course, missing) if missing else []


def _mine(queue: _Queue, job: Job) -> bool:
    """Claim a job the pool left (all its workers died) for grading alone."""
    while True:
        verdict = queue.take(job)
        if verdict != "busy":
            return verdict == "mine"
        time.sleep(queue.poll)


def copy_demo_submissions(course: Path, demos: Path) -> int:
    """Copy ``demos/<student>/<assignment>/*.ipynb`` into an *empty* ``gradebook/submitted``."""
    target = Path(course) / "gradebook" / "submitted"
    if target.exists() and any(target.iterdir()):
        return 0
    shutil.copytree(demos, target, dirs_exist_ok=True)
    return len(list(target.glob("*/*/*.ipynb")))
