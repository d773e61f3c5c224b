"""Red team: attacks on the grader, each through the real ``nbgrader autograde``.

One course, one parallel grading run (2 workers) of many students: every attack must cost
the part it attacks (and only that part), while honest students graded in the same run get
full marks. The kernel is the chipsim-sandbox (nobody, limits) when the tests run as root.
"""

from __future__ import annotations

import json
import re
import sqlite3
import warnings
from pathlib import Path

import nbformat
import pytest
from grading_course import (
    NO_SANDBOX,
    course_env,
    grades,
    make_sandbox_course,
    nbgrader,
    submit_notebook,
)
from redteam_students import (
    FULL,
    FULL_INSTGEN,
    FULL_MEMORY,
    instgen_students,
    memory_students,
    students,
)

from grader.gradebook.pool import grade_all
from grader.problems.parts import PARTS
from grader.sandbox.limits import CELL_SECONDS

pytestmark = pytest.mark.skipif(
    NO_SANDBOX, reason="this machine cannot sandbox kernels (no namespaces): nothing to attack"
)

#: Per-cell limit in the tests: the course's own (an honest memory challenge cell, its planner
#: on 242 instances, takes about 45 s alone, and ran past 90 s with two workers beside a CI
#: run: a tighter limit than the course's failed an honest notebook the course passes).
TIMEOUT = CELL_SECONDS


@pytest.fixture(scope="module")
def redteam(tmp_path_factory):
    course = make_sandbox_course(tmp_path_factory.mktemp("redteam"))
    for assignment in ASSIGNMENTS:
        done = nbgrader(course, "generate_assignment", assignment, "--force")
        assert done.returncode == 0, done.stderr
    released = nbformat.read(course / "gradebook" / "release" / "fusion" / "fusion.ipynb", 4)
    solution = nbformat.read(course / "solutions" / "fusion" / "fusion.ipynb", 4)
    path = Path("memory_planning") / "memory_planning.ipynb"
    memory = memory_students(
        nbformat.read(course / "gradebook" / "release" / path, 4),
        nbformat.read(course / "solutions" / path, 4),
    )
    path = Path("instruction_generation") / "instruction_generation.ipynb"
    instgen = instgen_students(
        nbformat.read(course / "gradebook" / "release" / path, 4),
        nbformat.read(course / "solutions" / path, 4),
    )
    checks = course / "pkg" / "grader" / "scoring" / "checks.py"
    before = checks.read_bytes()
    cases = students(released, solution, course)
    for name, (nb, _) in cases.items():
        with warnings.catch_warnings():  # one attack hands in a test cell twice (its grade_id;
            # nbformat renumbers the repeated cell id, and warns)
            warnings.simplefilter("ignore", nbformat.warnings.DuplicateCellId)
            submit_notebook(course, "fusion", name, nb)
    helper = course / "gradebook" / "submitted" / "honest_helper_module" / "fusion"
    (helper / "helpers_of_mine.py").write_text("READY = True\n")
    scratch = course / "gradebook" / "submitted" / "honest_reference" / "fusion" / "scratch.ipynb"
    scratch.mkdir()  # a folder named like a notebook: it stops nothing
    (scratch / "notes.txt").write_text("mine\n")
    for name, (nb, _) in memory.items():
        submit_notebook(course, "memory_planning", name, nb)
    for name, (nb, _) in instgen.items():
        submit_notebook(course, "instruction_generation", name, nb)
    run = grade_all(
        course,
        workers=2,
        extra=[f"--GuardedExecute.timeout={TIMEOUT}"],
        env=course_env(course),
        progress=False,
    )
    assert run.ok, [o.log for o in run.outcomes if o.returncode]
    # A deleted test cell leaves a grade without an auto score (nbgrader: 0, flagged for a
    # person to look at).
    g = {
        s: {k: (v or 0.0) for k, v in parts.items()}
        for assignment in ASSIGNMENTS
        for s, parts in grades(course, assignment).items()
    }
    return course, g, {**cases, **memory, **instgen}, before, checks


#: Every assignment the red team attacks (the course's three).
ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")


def full_marks(name: str) -> dict[str, float]:
    return FULL_MEMORY if "memory" in name else FULL_INSTGEN if "instgen" in name else FULL


def expected(losses: dict[str, float]) -> dict[str, float]:
    full = next((f for f in (FULL_MEMORY, FULL_INSTGEN) if set(losses) & set(f)), FULL)
    return {**full, **losses}


#: The share of an open challenge's points the course's solution is held to. Full credit there
#: needs every hidden instance within the slack of the reference, and the solution's search,
#: full on most draws, can land a hair outside it on one: 3.998 of 4 on honest_dunders' draw at
#: 5df4ecc (the draws follow a notebook's contents, so editing the solution moves them). An
#: attack the grader catches costs the whole part, far below this.
CHALLENGE_FLOOR = 0.99


def matches(got: dict[str, float], want: dict[str, float], attacked: set[str]) -> bool:
    """Every part exactly as wanted, but an open challenge nobody attacked: near full."""
    if got.keys() != want.keys():
        return False
    return all(
        CHALLENGE_FLOOR * want[p] <= got[p] <= want[p]
        if PARTS[p].challenge and p not in attacked
        else got[p] == want[p]
        for p in want
    )


def test_honest_students_get_full_marks(redteam):
    _, g, cases, _, _ = redteam
    for name in cases:
        if name.startswith("honest_"):
            assert matches(g[name], full_marks(name), set()), (name, g[name])


def test_each_attack_costs_only_its_part(redteam):
    _, g, cases, _, _ = redteam
    wrong = {}
    for name, (_, losses) in cases.items():
        if name.startswith("honest_"):
            continue
        want = expected(losses)
        if not matches(g[name], want, set(losses)):
            wrong[name] = (g[name], want)
    assert not wrong, json.dumps(wrong, indent=1)


def test_the_challenge_floor_tells_a_hair_from_a_lost_part():
    full = {"fusion_chains": 3.0, "fusion_challenge": 4.0}
    assert matches({"fusion_chains": 3.0, "fusion_challenge": 3.998}, full, set())
    assert not matches({"fusion_chains": 3.0, "fusion_challenge": 0.0}, full, set())
    assert not matches({"fusion_chains": 2.999, "fusion_challenge": 4.0}, full, set())
    # an attacked challenge must lose exactly what the attack costs
    lost = {"fusion_chains": 3.0, "fusion_challenge": 0.0}
    assert not matches(
        {"fusion_chains": 3.0, "fusion_challenge": 3.998}, lost, {"fusion_challenge"}
    )


def test_every_grade_is_in_the_gradebook_exactly_once(redteam):
    course, g, cases, _, _ = redteam
    assert sorted(g) == sorted(cases)
    db = sqlite3.connect(course / "gradebook" / "gradebook.db")
    rows = db.execute(
        "SELECT student.id, base_cell.name, COUNT(*) FROM grade "
        "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
        "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id "
        "JOIN student ON submitted_assignment.student_id = student.id "
        "JOIN base_cell ON grade.cell_id = base_cell.id "
        "GROUP BY student.id, base_cell.name"
    ).fetchall()
    assert len(rows) == sum(len(full_marks(name)) for name in cases)
    assert {n for _, _, n in rows} == {1}


def test_chipsim_files_are_pristine_after_the_run(redteam):
    _, _, _, before, checks = redteam
    assert checks.read_bytes() == before


def _cell_text(course, student, gid, assignment="fusion"):
    path = course / "gradebook" / "autograded" / student / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, 4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)
    return "\n".join(
        str(o.get("data", {}).get("text/plain", o.get("evalue", ""))) for o in cell.outputs
    )


def test_feedback_names_the_reason(redteam):
    course, _, _, _, _ = redteam
    assert "different graph" in _cell_text(course, "rt_forged_other_graph", "fusion_epilogue")
    unavailable = "is not available to your solution"
    for name in ("rt_getattr_reference", "rt_importlib_reference", "rt_pickle", "rt_gc"):
        assert unavailable in _cell_text(course, name, "fusion_challenge"), name
    assert "MemoryError" in _cell_text(course, "rt_memory_hog", "fusion_challenge")
    loop = _cell_text(course, "rt_infinite_loop", "fusion_challenge")
    assert f"more than {TIMEOUT} s" in loop
    assert f"more than {TIMEOUT} s" in _cell_text(course, "rt_stubborn_loop", "fusion_patterns")
    skipped = _cell_text(course, "rt_skip_work", "fusion_challenge")
    assert "in no group" in skipped and "matmul" in skipped
    squeezed = _cell_text(course, "rt_memory_squeezed", "memory_challenge", "memory_planning")
    assert "overlap" in squeezed and "whole part scores 0" in squeezed
    restored = _cell_text(course, "rt_edit_delete_tests", "fusion_challenge")
    assert "the grader used the course's original" in restored
    assert "your function raised" in restored  # it ran, and met the unsolved part 3
    hard = _cell_text(course, "rt_hardcoded", "fusion_challenge")
    assert "transformer_h1: 0.0% credit" in hard and "whole part scores 0" in hard
    shaped = _cell_text(course, "rt_forged_shape", "fusion_patterns")
    assert '"patterns" must be dict, not bool' in shaped
    instgen = "instruction_generation"
    for name, part in (("rt_instgen_generated", "instgen_challenge"),
                       ("rt_instgen_reference_units", "instgen_units")):  # fmt: skip
        assert unavailable in _cell_text(course, name, part, instgen), name
    skipped_sum = _cell_text(course, "rt_instgen_skipped_sum", "instgen_challenge", instgen)
    assert "differs from the reference interpreter" in skipped_sum
    assert "stored by instruction #" in skipped_sum and "whole part scores 0" in skipped_sum


def test_a_flood_of_display_data_stays_within_the_notebooks_budget(redteam):
    course, _, _, _, _ = redteam
    path = course / "gradebook" / "autograded" / "rt_display_flood" / "fusion" / "fusion.ipynb"
    assert path.stat().st_size < 40 << 20  # 32 MiB of outputs, and the course's own cells


def test_the_feedback_of_a_script_output_runs_nothing(redteam):
    course, _, _, _, _ = redteam
    done = nbgrader(course, "generate_feedback", "fusion", "--student", "rt_script_output")
    assert done.returncode == 0, done.stderr[-2000:]
    page = course / "gradebook" / "feedback" / "rt_script_output" / "fusion" / "fusion.html"
    html = page.read_text()
    assert "Content-Security-Policy" in html
    assert not re.search(r"<script\b", html, re.I)  # no script element at all
    assert not re.search(r"<[a-z][^>]*\son\w+\s*=", html, re.I)  # no event handler attribute


def test_every_notebook_ran_in_the_sandbox_and_the_secret_stayed_private(redteam):
    course, _, cases, _, _ = redteam
    for path in (course / "gradebook" / "autograded").glob("*/*/*.ipynb"):
        assert nbformat.read(path, 4).metadata["chipsim"]["sandbox"] in ("root", "userns")
    assert "FileNotFoundError" in _cell_text(course, "rt_read_solutions", "fusion_challenge")
    assert (course / "gradebook" / "hidden_instances.key").stat().st_mode & 0o077 == 0
    assert len(list((course / "gradebook" / "autograded").glob("*/*"))) == len(cases)


def test_flags_for_the_instructor_name_the_attempts(redteam):
    """The static scan still notices (for the instructor), though no score depends on it."""
    course, _, _, _, _ = redteam
    text = "\n".join(
        str(nbformat.read(p, 4).metadata["chipsim"]["flags"])
        for p in (course / "gradebook" / "autograded").glob("rt_*/fusion/*.ipynb")
    )
    assert "importlib" in text and "computed attribute name" in text
    honest = (course / "gradebook" / "autograded").glob("honest_*/*/*.ipynb")
    assert all(nbformat.read(p, 4).metadata["chipsim"]["flags"] == [] for p in honest)
