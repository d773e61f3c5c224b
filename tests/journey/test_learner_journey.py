"""A new learner's first day, walked end to end on a fresh checkout in a temporary folder.

What the learner did (issue: the learner's first day): take the course from the README, write
every assignment, run the test cells, validate, ``make grade-mine`` twice (the second after a
change), read the feedback pages in a browser, build the leaderboard. What must hold:

* the learner's files (every notebook, a cell of their own, a helper module) are never
  written by a course command: byte for byte the same after each ``make grade-mine``, on a
  fresh gradebook and again;
* the test cell's provisional score on the visible instances is the grader's on them;
* Validate passes a part at full marks and says nothing about floats;
* the feedback pages render in Chromium with nothing overflowing and no script;
* ``make grade-mine`` says which notebook it graded, and a name with a space is refused with a
  clear message, never spliced into a shell.

The checkout is the working tree's tracked files (what ``git clone`` would give), with this
test's own virtual environment standing in for ``make setup`` (CI's ``make test`` builds the
environment from nothing on a fresh clone already); the course's commands run through
``make`` in that folder, as the README says.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "grading"))
from grading_course import mix  # noqa: E402

pytestmark = pytest.mark.grading

ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")
MY_CELL = "# my own notes: plans I tried\nMY_NOTE = 'keep me'\n"
PROVISIONAL = re.compile(r"Provisional score on the visible instances: (\S+) of (\S+) points")
PREVIEW = re.compile(r"Visible instances \(practice, not counted[^)]*\): (\S+) points there")


def _checkout(dest: Path) -> Path:
    """The tracked files of the working tree, as a fresh clone would hold them."""
    files = (
        subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(dest), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"],
        check=True,
    )
    # `make setup` stands in: this test's environment, and its stamp newer than the sources
    (dest / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    for name in ("requirements.txt", "pyproject.toml", "config/ipython_kernel_config.py"):
        os.utime(dest / name, (0, 0))
    return dest


def _make(course: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "MAKEFLAGS"))}
    return subprocess.run(
        ["make", "-C", str(course), *args], capture_output=True, text=True, timeout=timeout,
        env=env, check=False,
    )  # fmt: skip


def _run_like_jupyterlab(path: Path) -> nbformat.NotebookNode:
    """Run every cell, as the learner does in JupyterLab, and save the outputs."""
    nb = nbformat.read(path, 4)
    NotebookClient(
        nb, timeout=600, allow_errors=True, resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    nbformat.write(nb, path)
    return nb


def _provisional(nb) -> dict[str, str]:
    out = {}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        for o in cell.get("outputs", []):
            m = PROVISIONAL.search(str(o.get("data", {}).get("text/plain", "")))
            if m:
                out[gid] = m.group(1)
    return out


def _preview(course: Path, assignment: str) -> dict[str, str]:
    path = course / "gradebook" / "autograded" / "me" / assignment / f"{assignment}.ipynb"
    out = {}
    for cell in nbformat.read(path, 4).cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        for o in cell.get("outputs", []):
            m = PREVIEW.search(str(o.get("data", {}).get("text/plain", "")))
            if m:
                out[gid] = m.group(1)
    return out


def _snapshot(course: Path) -> dict[str, bytes]:
    mine = [*course.glob("exercises/*/*"), *course.glob("my-work/**/*")]
    return {str(p.relative_to(course)): p.read_bytes() for p in mine if p.is_file()}


@pytest.fixture(scope="module")
def journey(tmp_path_factory):
    course = _checkout(tmp_path_factory.mktemp("journey") / "course")
    log = {}
    for a in ASSIGNMENTS:  # the learner writes every notebook in exercises/ ...
        path = course / "exercises" / a / f"{a}.ipynb"
        released = nbformat.read(path, 4)
        solution = nbformat.read(course / "solutions" / a / f"{a}.ipynb", 4)
        ids = {c.metadata.get("nbgrader", {}).get("grade_id") for c in solution.cells}
        nb = mix(released, solution, {i for i in ids if i and i.endswith("_code")})
        nb.cells.insert(3, nbformat.v4.new_code_cell(MY_CELL))  # ... with a cell of their own
        nbformat.write(nb, path)
        log[a] = _provisional(_run_like_jupyterlab(path))
    (course / "exercises" / "fusion" / "helpers.py").write_text("HELPED = True\n")
    before_first = _snapshot(course)
    first = _make(course, "grade-mine")
    after_first = _snapshot(course)
    # a change: the memory challenge falls back to part 3's greedy plan; then grade again
    path = course / "exercises" / "memory_planning" / "memory_planning.ipynb"
    nb = nbformat.read(path, 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "memory_challenge_code":
            cell.source = (
                "def my_planner(records, alignment=64):\n"
                "    return greedy_plan(records, alignment)\n"
            )
    nbformat.write(nb, path)
    before_second = _snapshot(course)
    second = _make(course, "grade-mine")
    after_second = _snapshot(course)
    board = _make(course, "leaderboard")
    return {
        "course": course, "provisional": log, "first": first, "second": second, "board": board,
        "snapshots": (before_first, after_first, before_second, after_second),
    }  # fmt: skip


def test_grade_mine_never_writes_the_learners_files(journey):
    before_first, after_first, before_second, after_second = journey["snapshots"]
    assert journey["first"].returncode == 0, (
        journey["first"].stdout[-3000:] + journey["first"].stderr[-3000:]
    )
    assert journey["second"].returncode == 0, (
        journey["second"].stdout[-3000:] + journey["second"].stderr[-3000:]
    )
    assert after_first == before_first  # byte for byte, on a fresh gradebook
    assert after_second == before_second  # and again
    for a in ASSIGNMENTS:
        nb = nbformat.read(journey["course"] / "exercises" / a / f"{a}.ipynb", 4)
        assert any(c.source == MY_CELL for c in nb.cells)


def test_grade_mine_says_what_it_graded(journey):
    out = journey["first"].stdout
    assert "fusion: your work is exercises/fusion/fusion.ipynb" in out
    assert "memory_planning: your work is exercises/memory_planning/memory_planning.ipynb" in out
    assert "Your feedback on fusion (new):" in out
    # the total says out of what (a walk read a bare "me  11.809")
    assert re.search(r"^  me +\d+\.\d{3} / \d+(\.\d+)? points$", out, re.M), out[-2000:]
    assert "unchanged since they were graded, skipped: me/fusion" in journey["second"].stdout
    assert "Your feedback on fusion (unchanged: your notebook is" in journey["second"].stdout
    assert "drawn anew for it" in journey["second"].stdout  # why a regrade may move a little


def test_the_test_cell_shows_what_the_grader_gives_on_the_visible_instances(journey):
    for a in ASSIGNMENTS:
        shown = journey["provisional"][a]
        graded = _preview(journey["course"], a)
        assert shown and set(shown) <= set(graded), (a, shown, graded)
        for part, points in shown.items():
            if a == "memory_planning" and part == "memory_challenge":
                continue  # changed before the second grading
            assert graded[part] == points, (a, part, shown, graded)


def test_the_helper_module_beside_the_notebook_reached_the_grader(journey):
    nb = nbformat.read(
        journey["course"] / "gradebook" / "submitted" / "me" / "fusion" / "fusion.ipynb", 4
    )
    assert nb  # the notebook was copied ...
    assert (
        journey["course"] / "gradebook" / "submitted" / "me" / "fusion" / "helpers.py"
    ).is_file()


def test_validate_passes_full_parts_without_float_warnings(journey):
    import logging

    from nbgrader.validator import Validator

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__()
            self.seen = []

        def emit(self, record):
            self.seen.append(record.getMessage())

    for a in ASSIGNMENTS:  # nbgrader's own Validate (the button), on the learner's notebooks
        path = journey["course"] / "exercises" / a / f"{a}.ipynb"
        validator = Validator()
        keep = Keep()
        validator.log.addHandler(keep)
        found = validator.validate(str(path))
        failed = found.get("failed", [])
        if a == "memory_planning":  # its challenge was changed to greedy: not full marks
            assert [f for f in failed if "memory_challenge" not in str(f)] == [], found
        else:
            assert not failed, found
        assert not any("cannot be converted" in m for m in keep.seen), keep.seen


def test_the_feedback_pages_render_without_overflow_or_script(journey, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for a in ASSIGNMENTS:
        html = journey["course"] / "gradebook" / "feedback" / "me" / a / f"{a}.html"
        page.goto(html.as_uri(), wait_until="networkidle")
        over = page.evaluate(
            "() => [...document.querySelectorAll('pre, p, td, th, li')]"
            ".filter(e => e.scrollWidth > e.clientWidth + 2).map(e => e.innerText.slice(0, 80))"
        )
        assert over == [], (a, over)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 2")
        alts = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.alt)")
        assert alts and all(alt and not alt.startswith("<Figure") for alt in alts), (a, alts)
    board = journey["course"] / "gradebook" / "leaderboard.html"
    page.goto(board.as_uri(), wait_until="networkidle")
    assert "me" in page.locator("body").inner_text()
    context.close()
    assert errors == []


def test_a_name_with_a_space_is_refused_not_spliced(journey):
    done = _make(journey["course"], "grade-mine", "ME=ada lovelace; touch /tmp/pwned-journey")
    assert done.returncode != 0
    assert "learner id 'ada lovelace; touch /tmp/pwned-journey'" in done.stderr
    assert not Path("/tmp/pwned-journey").exists()
