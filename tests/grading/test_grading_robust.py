"""One notebook's trouble never loses a grade; a changed submission is regraded, an unchanged
one skipped. Through ``make grade``'s own command (``grader.cli grade``).

Each troubled notebook is the reference solution plus one kind of trouble, so its expected
grade is full marks: the trouble may cost nothing but, at most, the cell it is in.
"""

from __future__ import annotations

import csv
import json
import os

import nbformat
import pytest
from grading_course import course_env, grades, make_course, nbgrader, submit_notebook

from grader import cli

FULL = {"fusion_patterns": 2.0, "fusion_chains": 3.0, "fusion_epilogue": 3.0,
        "fusion_challenge": 4.0}  # fmt: skip

FLOOD = "import sys\nfor _ in range(40_000):\n    sys.stdout.write('x' * 1000 + '\\n')\n"
DEEP = (
    "from IPython.display import display\n"
    "deep = 0\nfor _ in range(600):  # the kernel can send it; the grader must cope\n"
    "    deep = [deep]\n"
    "display({'application/json': deep}, raw=True)\n"
)
UNREADABLE = (  # messages on the kernel's output channel with no valid signature
    "k = get_ipython().kernel\n"
    "for _ in range(500):\n"
    "    k.iopub_socket.send_multipart([b'<IDS|MSG>', b'0' * 64, b'{}', b'{}', b'{}', b'{}'])\n"
)


def _cells_after(nb, gid: str, *sources: str):
    nb = nbformat.from_dict(nb)
    k = next(
        i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == gid
    )
    for src in reversed(sources):
        nb.cells.insert(k + 1, nbformat.v4.new_code_cell(src))
    return nb


def _test_cell(nb, gid: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def _grade(course, monkeypatch) -> int:
    for key, value in course_env(course).items():
        monkeypatch.setenv(key, value)
    return cli.main(["grade", "--course", str(course), "--no-demo", "--workers", "2",
                     "--timeout", "40"])  # fmt: skip


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("robust"))
    assert nbgrader(course, "generate_assignment", "fusion", "--force").returncode == 0
    return course


@pytest.fixture(scope="module")
def first_run(course, request):
    released = nbformat.read(course / "gradebook" / "release" / "fusion" / "fusion.ipynb", 4)
    solution = nbformat.read(course / "solutions" / "fusion" / "fusion.ipynb", 4)
    meta = nbformat.from_dict(solution)
    _test_cell(meta, "fusion_chains").metadata["nbgrader"].update(grade=False, points=100)
    _test_cell(meta, "fusion_epilogue").metadata["nbgrader"]["solution"] = True
    deleted = nbformat.from_dict(solution)
    deleted.cells = [c for c in deleted.cells if c is not _test_cell(deleted, "fusion_challenge")]
    students = {
        "honest": solution,
        "blank": released,
        "meta_edited": meta,
        "test_deleted": deleted,
        "flood": _cells_after(solution, "fusion_challenge", FLOOD),
        "deep_output": _cells_after(solution, "fusion_challenge", DEEP),
        "unreadable": _cells_after(solution, "fusion_challenge", UNREADABLE),
        "deep_zh": _cells_after(solution, "fusion_challenge", DEEP),
    }
    students["deep_zh"].metadata["chipsim"] = {"language": "zh_CN"}  # the 中文 edition's
    for name, nb in students.items():
        submit_notebook(course, "fusion", name, nb)
    deep_file = course / "gradebook" / "submitted" / "deep_file" / "fusion"
    deep_file.mkdir(parents=True)
    (deep_file / "fusion.ipynb").write_text("[" * 100_000 + "]" * 100_000)
    linked = course / "gradebook" / "submitted" / "linked" / "fusion"
    linked.mkdir(parents=True)
    os.symlink(course / "solutions" / "fusion" / "fusion.ipynb", linked / "fusion.ipynb")
    mp = pytest.MonkeyPatch()
    request.addfinalizer(mp.undo)
    code = _grade(course, mp)
    return code, grades(course, "fusion"), _csv(course)


def _csv(course) -> list[dict]:
    with (course / "gradebook" / "grades.csv").open() as f:
        return list(csv.DictReader(f))


def test_troubled_notebooks_keep_every_grade(first_run):
    _, g, _ = first_run
    for name in ("honest", "meta_edited", "test_deleted", "flood", "deep_output", "unreadable",
                 "deep_zh"):  # fmt: skip
        assert g[name] == FULL, name
    assert sum(g["blank"].values()) == 0.0


def test_unreadable_submissions_are_listed_not_zeroed(first_run, capsys):
    code, g, rows = first_run
    assert code == 1  # the command says something was not graded
    assert "deep_file" not in g and "linked" not in g
    status = {r["student"]: r["status"] for r in rows}
    assert status["deep_file"].startswith("not graded: fusion.ipynb is nested")
    assert status["linked"].startswith("not graded: fusion.ipynb is a link")
    assert {status[s] for s in ("honest", "flood", "blank")} == {"graded"}


def _outputs(course, student: str) -> str:
    path = course / "gradebook" / "autograded" / student / "fusion" / "fusion.ipynb"
    return json.dumps(nbformat.read(path, 4).cells, default=str)


def test_the_feedback_says_what_the_grader_did(course, first_run):
    assert "the grader used the course's original" in _outputs(course, "meta_edited")
    assert "the grader used the course's original" in _outputs(course, "test_deleted")
    flood = course / "gradebook" / "autograded" / "flood" / "fusion" / "fusion.ipynb"
    assert flood.stat().st_size < 8 << 20  # 40 MB printed; a few MiB kept
    # the kernel may batch its stdout into chunks of any size, so one chunk can cross the
    # notebook's budget as well as the cell's: either note is right, but one must be there
    flooded = _outputs(course, "flood")
    assert any(
        f"the grader cut the output of {where}" in flooded
        for where in ("this cell", "this notebook")
    )
    assert "nested deeper than" in _outputs(course, "deep_output")
    assert "unreadable message(s) from the kernel" in _outputs(course, "unreadable")
    # ... in the learner's language: a Chinese notebook's note is in Chinese
    deep_zh = json.loads(_outputs(course, "deep_zh"))
    said = [o.get("text", "") for c in deep_zh for o in c.get("outputs", [])]
    assert any(t.startswith("[评分程序删除了一个嵌套超过 64 层的输出]") for t in said)
    assert not any("nested deeper than" in t for t in said)
    flags = (course / "gradebook" / "flags.csv").read_text()
    assert "meta_edited,fusion,fusion_chains" in flags and "test cell restored" in flags


@pytest.fixture(scope="module")
def second_run(course, first_run, request):
    """The blank learner resubmits a solved part 1; nothing else changes."""
    released = nbformat.read(course / "gradebook" / "release" / "fusion" / "fusion.ipynb", 4)
    solution = nbformat.read(course / "solutions" / "fusion" / "fusion.ipynb", 4)
    sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    _test_cell(released, "fusion_patterns_code").source = sources["fusion_patterns_code"]
    submit_notebook(course, "fusion", "blank", released)
    mp = pytest.MonkeyPatch()
    request.addfinalizer(mp.undo)
    _grade(course, mp)
    return grades(course, "fusion"), _csv(course)


def test_a_changed_submission_is_regraded_and_the_rest_skipped(first_run, second_run, capfd):
    g, rows = second_run
    assert g["blank"]["fusion_patterns"] == 2.0 and sum(g["blank"].values()) == 2.0
    assert g["honest"] == FULL
    blank = [r for r in rows if r["student"] == "blank" and r["part"] == "fusion_patterns"]
    assert float(blank[0]["score"]) == 2.0


def test_the_second_run_graded_only_the_change(course, second_run):
    ledger = json.loads((course / "gradebook" / "graded.json").read_text())
    assert ledger["blank/fusion"]["status"] == "graded"
    autograded = course / "gradebook" / "autograded"
    times = {p.parent.parent.name: p.stat().st_mtime for p in autograded.glob("*/fusion/*.ipynb")}
    assert times["blank"] > max(t for s, t in times.items() if s != "blank")
