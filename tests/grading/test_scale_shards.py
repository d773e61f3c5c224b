"""Shards against one PostgreSQL gradebook, end to end with nbgrader: several at once (two
with the same index by mistake), one killed mid-run and run again, and the database going
away for a few seconds. Every (learner, notebook) must be graded exactly once: the audit log
(``chipsim_gradings``) has one row per job, and nbgrader's gradebook a full set of grades."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter

import nbformat
import pytest
from grading_course import NO_SANDBOX, course_env, make_course, nbgrader, submit_notebook
from scale_postgres import postgres  # noqa: F401 - the fixture

from grader.gradebook.db import normalize
from grader.gradebook.records import Store
from grader.gradebook.shards import shard_of


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The released fusion notebook (what a learner who solved nothing submits)."""
    course = make_course(tmp_path_factory.mktemp("release"))
    assert nbgrader(course, "generate_assignment", "fusion", "--force").returncode == 0
    return nbformat.read(course / "gradebook" / "release" / "fusion" / "fusion.ipynb", 4)


def _class(tmp_path, released, learners: list[str]):
    course = make_course(tmp_path)
    for student in learners:
        submit_notebook(course, "fusion", student, nbformat.from_dict(released))
    return course


def _shard(course, url: str, shard: str = "", lease: float = 60) -> subprocess.Popen:
    env = {**course_env(course), "GRADEBOOK_URL": url, "CHIPSIM_CLAIM_LEASE": str(lease)}
    cmd = [sys.executable, "-m", "grader.cli", "grade", "--no-demo", "--workers", "1"]
    cmd += ["--shard", shard] if shard else []
    cmd += ["--unsafe-no-sandbox"] if NO_SANDBOX else []
    return subprocess.Popen(
        cmd, cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


def _summary(out: str) -> tuple[int, ...]:
    found = re.search(
        r"(\d+) graded, (\d+) skipped .*?, (\d+) graded by another process, (\d+) NOT graded", out
    )
    assert found, out[-2000:]
    return tuple(int(n) for n in found.groups())


def _graded_once(url: str, learners: list[str]) -> None:
    """The audit log has each job exactly once, and nbgrader a grade for every test cell."""
    from nbgrader.api import Gradebook

    log = Counter(key for key, _, _ in Store(normalize(url)).gradings())
    assert log == {f"{s}/fusion": 1 for s in learners}
    with Gradebook(normalize(url)) as gb:
        cells = {c.name for nb in gb.find_assignment("fusion").notebooks for c in nb.grade_cells}
        for student in learners:
            sub = gb.find_submission("fusion", student)
            assert {g.name for g in sub.notebooks[0].grades} == cells
            assert all(g.auto_score == 0.0 for g in sub.notebooks[0].grades)  # blank notebooks


def _gradings(store: Store) -> list:
    from sqlalchemy.exc import ProgrammingError

    try:
        return store.gradings()
    except ProgrammingError:  # the run has not created its tables yet
        return []


def _wait_for_gradings(url: str, n: int, proc: subprocess.Popen, timeout: float = 300) -> None:
    end = time.monotonic() + timeout
    store = Store(normalize(url))
    while len(_gradings(store)) < n:
        assert proc.poll() is None and time.monotonic() < end, "the run ended too early"
        time.sleep(0.3)


def test_shards_at_once_even_a_duplicate_grade_each_learner_exactly_once(
    tmp_path,
    released,
    postgres,  # noqa: F811
):
    learners = [f"learner{k}" for k in range(6)]
    course = _class(tmp_path, released, learners)
    url = postgres.new_database()
    procs = [_shard(course, url, s) for s in ("0/2", "1/2", "0/2")]  # the last one: a mistake
    outs = [_finish(p) for p in procs]
    _graded_once(url, learners)
    counts = [_summary(o) for o in outs]  # (graded, skipped, elsewhere, not graded)
    in_0 = [s for s in learners if shard_of(s, 2) == 0]
    assert counts[1] == (len(learners) - len(in_0), 0, 0, 0)
    assert counts[0][0] + counts[2][0] == len(in_0)  # the two 0/2 split shard 0 between them
    assert counts[0][0] + counts[0][2] == len(in_0) == counts[2][0] + counts[2][2]
    assert "make grade" in outs[1]
    export = _finish(_shard(course, url))  # after the shards: one plain run exports, grades nothing
    assert _summary(export) == (0, 6, 0, 0)
    assert (course / "gradebook" / "grades.csv").read_text().count("learner") >= 6
    _graded_once(url, learners)


def test_a_killed_shard_run_again_grades_what_it_left_and_nothing_twice(
    tmp_path,
    released,
    postgres,  # noqa: F811
):
    learners = [f"k{k}" for k in range(4)]
    course = _class(tmp_path, released, learners)
    url = postgres.new_database()
    first = _shard(course, url, "0/1", lease=3)
    _wait_for_gradings(url, 1, first)
    first.send_signal(signal.SIGKILL)  # the machine goes away mid-run
    first.wait()
    done_before = {k for k, _, _ in Store(normalize(url)).gradings()}
    assert 1 <= len(done_before) < len(learners)
    out = _finish(_shard(course, url, "0/1", lease=3))
    assert _summary(out) == (len(learners) - len(done_before), len(done_before), 0, 0)
    _graded_once(url, learners)


def test_the_database_going_away_for_seconds_loses_no_grade(
    tmp_path,
    released,
    postgres,  # noqa: F811
):
    learners = [f"d{k}" for k in range(4)]
    course = _class(tmp_path, released, learners)
    url = postgres.new_database()
    run = _shard(course, url)
    _wait_for_gradings(url, 1, run)
    postgres.stop()
    time.sleep(4)
    postgres.start()
    out = _finish(run)
    assert _summary(out) == (4, 0, 0, 0)
    _graded_once(url, learners)
