"""nbgrader's Validate (the command and the lab button) tells the truth about each part.

nbgrader counts a test cell without an error as full credit, so before the fix the untouched
release "passed all the tests". Now a blank or broken part fails Validate with the score's
explanation, and a solved one passes. (Partial credit at grading time is checked by
``test_grading_nbgrader.py::test_partial_solutions_score_between_in_order``.)
"""

from __future__ import annotations

import re

import nbformat
import pytest
from grading_course import ROOT, mix
from nbgrader.validator import Validator

from chipsim.text import text_width

ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")


def notebooks(assignment: str):
    released = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    solution = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    code = [
        c.metadata["nbgrader"]["grade_id"]
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    ]
    tests = [
        c.metadata["nbgrader"]["grade_id"]
        for c in solution.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"
    ]
    return released, solution, code, tests


def validate(tmp_path, nb, name: str) -> dict:
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return Validator().validate(str(path))


def failed_parts(result: dict, nb) -> list[str]:
    """The grade ids of the failed cells (Validator reports them by source)."""
    by_source = {c.source: c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    return sorted(by_source[f["source"]] for f in result.get("failed", []))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_release_fails_every_part(tmp_path, assignment):
    released, _, _, tests = notebooks(assignment)
    result = validate(tmp_path, released, "blank")
    assert failed_parts(result, released) == sorted(tests)
    errors = "\n".join(f["error"] for f in result["failed"])
    assert "NotFullCredit" in errors and "0 of" in errors
    # what `nbgrader validate` prints: every line of the explanation whole (it cuts long
    # lines to its width and adds "...")
    validator = Validator()
    for failed in result["failed"]:
        raw = re.sub(r"\x1b\[[0-9;]*m", "", failed["raw_error"])
        explanation = raw[raw.rindex("NotFullCredit") :].splitlines()  # the message
        assert len(explanation) > 2
        too_long = [line for line in explanation
                    if len(validator.indent + line) > validator.width - 3]  # fmt: skip
        assert not too_long, too_long
        # the explanation alone: no frames of the course's code for a learner to read first
        assert "grader/notebook.py" not in raw and "Traceback" not in raw, raw


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solved_notebook_passes_and_half_solved_fails_the_rest(tmp_path, assignment):
    released, solution, code, tests = notebooks(assignment)
    full = mix(released, solution, set(code))
    assert validate(tmp_path, full, "full") == {}
    first = mix(released, solution, {code[0]})
    result = validate(tmp_path, first, "first")
    assert failed_parts(result, first) == sorted(tests[1:])


def test_validate_summary_says_what_it_measured_not_nbgraders_alarm(tmp_path):
    """`nbgrader validate` under the course's config: a part below full points (the usual
    state of an open challenge) is reported as such, in both languages, without nbgrader's
    "VALIDATION FAILED ... you WILL NOT receive full credit"."""
    import io

    from traitlets.config.loader import PyFileConfigLoader

    released, _, _, tests = notebooks("fusion")
    path = tmp_path / "blank.ipynb"
    nbformat.write(released, path)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    validator = Validator(config=config)
    validator.stream = io.StringIO()
    validator.validate_and_print(str(path))
    printed = re.sub(r"\x1b\[[0-9;]*m", "", validator.stream.getvalue())
    # the summary is refilled by terminal columns (a Chinese character takes two; nbgrader's
    # textwrap counted one, so its lines ran to about 140): every line within the validator's
    # width; lines break between words, a number keeps its Chinese words (a walk read "显示\n0
    # 分"), 。 never starts a line, and no line breaks inside `make grade-mine`
    summary = printed[printed.index(f"{len(tests)} PART(S) BELOW") :]
    summary = summary[: summary.index("=" * validator.width)].splitlines()
    assert len(summary) > 4 and all(text_width(line) <= validator.width for line in summary)
    assert any(text_width(line) > validator.width - 12 for line in summary if "分" in line)
    assert f"有\u00a0{len(tests)}\u00a0个" in printed and "显示\u00a00\u00a0分" in printed
    assert "\u200b" not in printed  # the marks where a line may break are not printed
    assert "grade-\nmine" not in printed and not any(line.startswith("。") for line in summary)
    assert "。 " not in printed  # no space between Chinese sentences
    printed = " ".join(printed.split())  # nbgrader refills the summary to its width
    assert "WILL NOT" not in printed and "VALIDATION FAILED" not in printed
    assert f"{len(tests)} PART(S) BELOW FULL POINTS on the visible instances" in printed
    chinese = "".join(summary).replace("\u00a0", " ")  # a line may end between two characters
    assert f"有 {len(tests)} 个部分在可见实例上未得满分。下面每个部分" in chinese


def test_validate_gives_a_cell_the_time_the_grader_gives_it():
    """Validate runs a notebook with nbgrader's `Execute`, whose own limit is 30 s; the grader
    gives a cell 120 s. A walk's slow but accepted answer (graded 3 / 3) failed Validate with
    a bare CellTimeoutError instead of the test cell's pace warning."""
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader

    from grader.sandbox.execute import GuardedExecute
    from grader.sandbox.limits import CELL_SECONDS

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    validator = Validator(config=config)
    assert Execute in validator.preprocessors  # what Validate runs the notebook with
    assert Execute(parent=validator).timeout == GuardedExecute(parent=validator).timeout
    assert Execute(parent=validator).timeout == CELL_SECONDS
