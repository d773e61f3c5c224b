"""The grading pool: long-lived workers, a shared queue, and no grade lost when a worker dies."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import nbformat
from grading_course import course_env, grades, make_course, nbgrader, submit_notebook

from grader.gradebook.pool import (
    BLAS_THREADS,
    Job,
    _Queue,
    drain,
    grade_all,
    order_jobs,
    worker_env,
)

#: A stand-in worker: answers every job, but dies (exit 3) on a student called "boom" and
#: answers for the wrong student when asked about "liar".
FAKE_WORKER = """
import json, os, sys

for line in sys.stdin:
    job = json.loads(line)
    if job["student"] == "boom":
        os._exit(3)
    if job["student"] == "liar":
        job["student"] = "someone else"
    print(json.dumps({**job, "ok": True, "log": ""}), flush=True)
"""

#: A worker that dies on every job.
DYING_WORKER = "import sys, os\nsys.stdin.readline()\nos._exit(9)\n"


def _fake(tmp_path, source: str) -> list[str]:
    path = tmp_path / "worker.py"
    path.write_text(textwrap.dedent(source))
    return [sys.executable, str(path)]


def test_a_dead_worker_fails_only_its_job_and_is_replaced(tmp_path):
    jobs = [Job(s, "fusion") for s in ("a", "boom", "b", "liar", "c")]
    done = []
    outcomes = drain(tmp_path, _Queue(jobs), _fake(tmp_path, FAKE_WORKER), {}, done.append)
    by = {o.job.student: o for o in outcomes}
    assert [o.job for o in outcomes] == jobs and done == jobs  # every job answered, in order
    assert {s for s, o in by.items() if o.returncode == 0} == {"a", "b", "c"}
    assert by["boom"].returncode == 3 and "the worker stopped" in by["boom"].log
    assert by["liar"].returncode != 0  # a reply for another job is not trusted


def test_a_thread_stops_after_its_restarts_and_leaves_the_rest_in_the_queue(tmp_path):
    queue = _Queue([Job(f"s{k}", "fusion") for k in range(6)])
    outcomes = drain(tmp_path, queue, _fake(tmp_path, DYING_WORKER), {})
    assert len(outcomes) == 3 and all(o.returncode == 9 for o in outcomes)  # 1 + 2 restarts
    assert [j.student for j in queue.jobs] == ["s3", "s4", "s5"]


#: A worker that reports its session: it must not share the pool's (a kernel's
#: ``killpg``/``kill(0)`` there would reach ``make grade``).
SESSION_WORKER = """
import json, os, sys

for line in sys.stdin:
    job = json.loads(line)
    print(json.dumps({**job, "ok": True, "log": str(os.getsid(0))}), flush=True)
"""


def test_workers_run_in_sessions_of_their_own(tmp_path):
    outcomes = drain(tmp_path, _Queue([Job("a", "fusion")]), _fake(tmp_path, SESSION_WORKER), {})
    assert int(outcomes[0].log) != os.getsid(0)


def test_nothing_a_kernel_prints_reaches_the_protocol_channel():
    code = (
        "import subprocess, sys\n"
        "from grader.gradebook.worker import private_stdout\n"
        "channel = private_stdout()\n"
        "print('from the worker itself')\n"
        "subprocess.run([sys.executable, '-c', 'import os; os.write(1, b\"forged\\\\n\")'])\n"
        "channel.write('the answer\\n')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "the answer\n"
    assert "forged" in done.stderr and "from the worker itself" in done.stderr


def test_jobs_are_taken_heaviest_first_and_blas_gets_a_share_of_the_cores(tmp_path):
    root = tmp_path / "gradebook" / "submitted"
    for student, size in (("a", 10), ("b", 300), ("c", 300), ("d", 50)):
        (root / student / "fusion").mkdir(parents=True)
        (root / student / "fusion" / "fusion.ipynb").write_text("x" * size)
    jobs = [Job(s, "fusion") for s in "abcd"]
    assert [j.student for j in order_jobs(tmp_path, jobs)] == ["b", "c", "d", "a"]
    assert all(worker_env({"PATH": "/bin"}, 2 * 64)[v] == "1" for v in BLAS_THREADS)
    assert all(v not in worker_env({"PATH": "/bin"}, 1) for v in BLAS_THREADS)
    assert worker_env({"OPENBLAS_NUM_THREADS": "7"}, 2)["OPENBLAS_NUM_THREADS"] == "7"


def test_submissions_whose_worker_died_are_graded_again_exactly_once(tmp_path):
    course = make_course(tmp_path)
    assert nbgrader(course, "generate_assignment", "fusion", "--force").returncode == 0
    released = nbformat.read(course / "gradebook" / "release" / "fusion" / "fusion.ipynb", 4)
    for student in ("ann", "bob"):
        submit_notebook(course, "fusion", student, released)
    run = grade_all(
        course,
        workers=2,
        env=course_env(course),
        progress=False,
        worker=_fake(tmp_path, DYING_WORKER),
    )
    assert run.ok and [o.tries for o in run.outcomes] == [2, 2]
    assert all(o.returncode == 0 for o in run.outcomes)
    g = grades(course, "fusion")
    assert sorted(g) == ["ann", "bob"]
    assert all(v == 0.0 for parts in g.values() for v in parts.values())  # blank notebooks
