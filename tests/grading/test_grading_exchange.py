"""The JupyterHub class workflow through nbgrader's exchange, end to end.

release_assignment -> fetch_assignment -> submit -> collect -> autograde -> generate_feedback
-> release_feedback -> fetch_feedback, with a temporary exchange folder and two learners
(each a home folder; nbgrader knows a learner by ``$USER``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import nbformat
import pytest
from grading_course import BIN, course_env, grades, make_sandbox_course, mix, nbgrader

NAME = "memory_planning"
FULL = {
    "memory_liveness": 2.0,
    "memory_first_fit": 2.0,
    "memory_greedy": 3.0,
    "memory_challenge": 4.0,
}


def as_learner(home: Path, course: Path, exchange: Path, *args: str) -> subprocess.CompletedProcess:
    env = course_env(course)
    env.update(HOME=str(home), USER=home.name, LOGNAME=home.name)
    # On a hub the OS account names the learner; here one OS user plays both, so say who.
    flags = [
        f"--Exchange.root={exchange}",
        "--CourseDirectory.course_id=chipsim-ch4",
        f"--CourseDirectory.student_id={home.name}",
    ]
    return subprocess.run(
        [str(BIN / "nbgrader"), *args, *flags],
        cwd=home, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def exchange_run(tmp_path_factory):
    course = make_sandbox_course(tmp_path_factory.mktemp("hub"))
    exchange = course.parent / "exchange"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    flag = f"--Exchange.root={exchange}"

    def instructor(*args: str) -> str:
        done = nbgrader(course, *args, flag)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    instructor("generate_assignment", NAME, "--force")
    instructor("db", "student", "add", "ada")
    instructor("db", "student", "add", "bob")
    instructor("release_assignment", NAME, "--force")
    solution = nbformat.read(course / "solutions" / NAME / f"{NAME}.ipynb", 4)
    homes = {}
    for who in ("ada", "bob"):
        home = course.parent / "home" / who
        home.mkdir(parents=True)
        done = as_learner(home, course, exchange, "fetch_assignment", NAME)
        assert done.returncode == 0, done.stdout + done.stderr
        path = home / NAME / f"{NAME}.ipynb"
        released = nbformat.read(path, 4)
        solved = {"memory_liveness_code", "memory_first_fit_code"}
        if who == "ada":  # ada solves everything; bob the first two parts
            solved |= {"memory_greedy_code", "memory_challenge_code"}
        nbformat.write(mix(released, solution, solved), path)
        done = as_learner(home, course, exchange, "submit", NAME)
        assert done.returncode == 0, done.stdout + done.stderr
        homes[who] = home
    instructor("collect", NAME)
    instructor("autograde", NAME, "--create")
    instructor("generate_feedback", NAME)
    instructor("release_feedback", NAME)
    for home in homes.values():
        done = as_learner(home, course, exchange, "fetch_feedback", NAME)
        assert done.returncode == 0, done.stdout + done.stderr
    return course, homes, grades(course, NAME)


def test_collected_submissions_are_graded(exchange_run):
    _, _, g = exchange_run
    assert g["ada"] == FULL
    assert g["bob"]["memory_liveness"] == 2.0 and g["bob"]["memory_first_fit"] == 2.0
    assert g["bob"]["memory_greedy"] == 0.0 and g["bob"]["memory_challenge"] == 0.0


def test_learners_fetch_their_feedback_with_pictures(exchange_run):
    _, homes, _ = exchange_run
    images = {}
    for who, home in homes.items():
        pages = sorted((home / NAME / "feedback").glob("*/*.html"))
        assert len(pages) == 1, who
        text = pages[0].read_text()
        assert "Part memory_liveness: 2 / 2 points" in text
        assert "<img" in text, who  # the notebook's own plots, and the graded parts' pictures
        images[who] = text.count("<img")
    assert images["ada"] > images["bob"]  # ada's timed parts add "yours vs the reference"
