"""What ``make grade`` and ``make grade-mine`` tell: which notebooks were graded, which feedback
is new, and which feedback pages lost their pictures (no nbgrader run: the grading is faked)."""

from __future__ import annotations

import argparse
from pathlib import Path

import nbformat
import pytest

from grader import cli
from grader.gradebook.pool import WORKER_STOPPED, failure


def _course(tmp_path: Path) -> Path:
    """A course with one learner notebook per assignment (blank ones are fine here)."""
    for name in cli.ASSIGNMENTS:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
        (tmp_path / "exercises" / name).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "exercises" / name / f"{name}.ipynb")
    return tmp_path


def _mine(course: Path) -> argparse.Namespace:
    return argparse.Namespace(course=str(course), me="me", workers=1, timeout=0, memory_gib=4,
                              force=False, unsafe_no_sandbox=True)  # fmt: skip


def _page(course: Path, assignment: str) -> Path:
    page = course / "gradebook" / "feedback" / "me" / assignment / f"{assignment}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("<html>an earlier grading</html>")
    return page


@pytest.mark.parametrize("not_graded", ["one", "none"])
def test_grade_mine_says_which_feedback_is_new(tmp_path, monkeypatch, capsys, not_graded):
    """A notebook the run did not grade gets no "Your feedback" line (its page, if any, is from
    an earlier grading, and says so); a run that stopped before grading (``None``) graded none."""
    course = _course(tmp_path)
    first, *rest = cli.ASSIGNMENTS
    failed = {("me", first): "grading failed: SandboxError: File exists"}
    run = cli.Graded(1, failed if not_graded == "one" else None)
    monkeypatch.setattr(cli, "grade_run", lambda args: run)
    monkeypatch.setattr(cli, "feedback", lambda args: 0)
    old = _page(course, first)
    assert cli.grade_mine(_mine(course)) == 1
    out = capsys.readouterr().out
    assert f"No new feedback on {first}: it was NOT graded this time" in out
    assert f"earlier grading: {old}" in out
    assert f"Your feedback on {first}" not in out
    for name in rest:
        news = f"Your feedback on {name}" in out
        assert news == (not_graded == "one"), out
    assert "fixed benchmark" in out


def test_grade_mine_promises_no_page_when_feedback_fails(tmp_path, monkeypatch, capsys):
    course = _course(tmp_path)
    monkeypatch.setattr(cli, "grade_run", lambda args: cli.Graded(0, {}))
    monkeypatch.setattr(cli, "feedback", lambda args: 1)
    assert cli.grade_mine(_mine(course)) == 1
    out = capsys.readouterr().out
    assert "Your feedback" not in out and "No new feedback pages" in out


def test_grade_mine_says_which_feedback_is_new_and_which_stands(tmp_path, monkeypatch, capsys):
    """A notebook unchanged since it was graded keeps its grade and its feedback (the page is
    made again, the same): the line says so, and a graded one's says it is new."""
    course = _course(tmp_path)
    first, second, *_ = cli.ASSIGNMENTS
    run = cli.Graded(0, {}, frozenset({("me", first)}))
    monkeypatch.setattr(cli, "grade_run", lambda args: run)
    monkeypatch.setattr(cli, "feedback", lambda args: 0)
    monkeypatch.delenv("CHIPSIM_LANG", raising=False)
    assert cli.grade_mine(_mine(course)) == 0
    out = capsys.readouterr().out
    assert f"Your feedback on {first} (unchanged: your notebook is as it was" in out
    assert f"Your feedback on {second} (new): " in out


def test_grade_mine_says_when_the_language_asked_for_is_not_the_feedbacks(
    tmp_path, monkeypatch, capsys
):
    """``CHIPSIM_LANG=zh_CN make grade-mine`` cannot turn a page Chinese: the page speaks the
    language the learner's kernel spoke when the notebook last ran. Say so, and how to change
    it; say nothing when the page already speaks it."""
    course = _course(tmp_path)
    first, second, *_ = cli.ASSIGNMENTS
    for name, language in ((first, "en"), (second, "zh_CN")):
        _graded(course, name, picture=False, language=language)
    monkeypatch.setenv("CHIPSIM_LANG", "zh")
    notes = cli.language_notes(course, "me", list(cli.ASSIGNMENTS))
    assert len(notes) == 1 and f"your feedback on {first} is in English" in notes[0]
    assert "Run the notebook again with CHIPSIM_LANG=zh_CN" in notes[0]
    monkeypatch.delenv("CHIPSIM_LANG")
    assert cli.language_notes(course, "me", list(cli.ASSIGNMENTS)) == []


def _graded(course: Path, assignment: str, picture: bool, language: str = "") -> None:
    cell = nbformat.v4.new_code_cell("plot()")
    data = {"image/png": "iVBORw0KGgo="} if picture else {"text/plain": "1.0"}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    path = course / "gradebook" / "autograded" / "me" / assignment / f"{assignment}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[cell])
    if language:
        nb.metadata["chipsim"] = {"language": language}
    nbformat.write(nb, path)


def test_a_page_lost_its_pictures_only_when_its_notebook_has_some(tmp_path):
    """An exact-answer part draws nothing: its page without pictures is fine; a page without
    the pictures its graded notebook holds is not; a page with one is fine."""
    names = list(cli.ASSIGNMENTS)[:3]
    pages = [_page(tmp_path, n) for n in names]
    _graded(tmp_path, names[0], picture=False)
    _graded(tmp_path, names[1], picture=True)
    _graded(tmp_path, names[2], picture=True)
    pages[2].write_text('<html><img src="data:image/png;base64,iVBORw0KGgo="></html>')
    assert cli.pictureless(tmp_path, pages) == [pages[1]]


def test_a_failed_grading_names_its_error():
    log = ("Traceback (most recent call last):\n  File 'x', line 1\n"
           "grader.sandbox.launch.SandboxError: File exists: fontlist-v390.json\n"
           "[AutogradeApp | ERROR] There was an error processing assignment: x\n"
           "[AutogradeApp | ERROR] Please see the error log\n")  # fmt: skip
    assert failure(log) == "grader.sandbox.launch.SandboxError: File exists: fontlist-v390.json"
    assert failure(f"{WORKER_STOPPED}:\n[AutogradeApp | INFO] Converting") == WORKER_STOPPED
