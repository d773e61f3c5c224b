"""``make leaderboard`` ranks the grader's own challenge numbers, never what a notebook says:
on the hidden instances each grade counted, with the course's landmarks beside them, in the
right unit, safe to open in a spreadsheet."""

from __future__ import annotations

import csv
import math
import re

import nbformat
import pytest
from grading_course import ROOT

from chipsim.passes.fusion import fuse_elementwise_chains, no_fusion
from chipsim.passes.memory.planners import greedy_by_size
from grader import PARTS, score_answer
from grader.course.rescore import RescoreAnswers
from grader.feedback.leaderboard import look_alikes, spreadsheet_safe, write
from grader.feedback.standings import collect, measured
from grader.notebook import _RUNNERS
from grader.problems.hidden import seeds_for
from grader.scoring.answer import MIME, encode

PART = PARTS["fusion_challenge"]
SECRET = b"the leaderboard test secret, 32+ bytes"


def answer(part, fn, submission):
    """The answer document a learner's kernel would hand in (all instances, hidden too)."""
    bound = part.bind(seeds_for(SECRET, [part.id], submission))
    answers = {i.id: _RUNNERS[i.kind](i.build(), (fn,)) for i in bound.instances}
    return encode(part.id, answers)


def one_kernel(graph, chip):
    """Everything in one kernel: valid, and much slower (tiles of a row or two)."""
    from chipsim.passes.fusion import Partition

    return Partition([[i for i, n in enumerate(graph.nodes) if n.op != "constant"]])


def graded_notebook(assignment, part_id, doc, fake_measured=None):
    """The released notebook, its challenge test cell answered with ``doc``."""
    nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == part_id:
            cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: doc})]
    if fake_measured is not None:
        nb.metadata["chipsim"] = {"measured": fake_measured}
    return nb


def grade_into(course, key, learner, assignment, nb, submission):
    rescorer = RescoreAnswers()
    rescorer.config.HiddenInstances.secret_file = str(key)
    resources = {"nbgrader": {"assignment": assignment}, "chipsim": {"submission": submission}}
    nb, _ = rescorer.preprocess(nb, resources)
    folder = course / "gradebook" / "autograded" / learner / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{assignment}.ipynb")


@pytest.fixture
def course(tmp_path):
    key = tmp_path / "secret.key"
    key.write_bytes(SECRET)
    key.chmod(0o600)
    return tmp_path / "course", key


def test_measured_keeps_every_valid_instance_and_which_the_grade_counted():
    doc = answer(PART, fuse_elementwise_chains, "ada's notebook")
    bound = PART.bind(seeds_for(SECRET, [PART.id], "ada's notebook"))
    hidden = [i.id for i in bound.hidden()]
    score = score_answer(bound, doc, points=4, counted=hidden)
    kept = measured(score)
    assert sorted(kept) == sorted(i.id for i in PART.instances)
    # the leaderboard ranks on the benchmark (the same graphs for everybody), not on the
    # graphs drawn to check it
    benchmark = {i.id for i in bound.graded()}
    assert benchmark < set(hidden) and all(bound.instance(i).benchmark for i in benchmark)
    assert {k for k, n in kept.items() if n["counted"]} == benchmark
    # its "visible instances (the same for everybody)" are the visible ones, not this
    # learner's drawn graphs
    from grader.feedback.standings import entry

    shown = entry(PART.id, "ada", kept)
    assert set(shown.visible) == {i.id for i in PART.visible()}
    # beside it, the same measure on the graphs drawn to check the benchmark, by kind
    families = PART.families()
    checks = {i.id: families.get(i.id, i.id) for i in bound.checks()}
    assert checks and not checks.keys() & benchmark
    by_kind = {}
    for i, family in checks.items():
        by_kind.setdefault(family, []).append(math.log(kept[i]["theirs"] / kept[i]["reference"]))
    expect = math.exp(sum(sum(v) / len(v) for v in by_kind.values()) / len(by_kind))
    assert shown.check == pytest.approx(expect, rel=1e-9) and shown.check != shown.ratio
    assert entry("memory_challenge", "ada", {}) is None
    assert all(n["unit"] == "cycles" and {"theirs", "reference", "naive"} <= set(n)
               for n in kept.values())  # fmt: skip


def test_an_invalid_answer_on_a_counted_instance_is_not_ranked():
    """One invalid answer scores the whole part 0: the leaderboard does not rank the grading
    on its valid answers, as if it had scored."""
    from chipsim.passes.fusion import Partition
    from grader.feedback.standings import entry

    def drops_an_op_on_cnns(graph, chip):  # an op in no kernel: invalid
        groups = fuse_elementwise_chains(graph, chip).groups
        return Partition(groups[1:]) if "cnn" in graph.name else Partition(groups)

    doc = answer(PART, drops_an_op_on_cnns, "bea's notebook")
    bound = PART.bind(seeds_for(SECRET, [PART.id], "bea's notebook"))
    score = score_answer(bound, doc, points=4, counted=[i.id for i in bound.hidden()])
    assert score.score == 0
    kept = measured(score)
    invalid = {k for k, n in kept.items() if n.get("invalid")}
    assert invalid and all(kept[k]["counted"] for k in invalid)
    assert any(n["counted"] and not n.get("invalid") for n in kept.values())  # valid ones too
    assert entry(PART.id, "bea", kept) is None
    valid = {k: n for k, n in kept.items() if not n.get("invalid")}
    assert entry(PART.id, "bea", valid) is not None  # what the leaderboard ranked before


def test_a_failed_check_is_ranked_as_graded_and_marked():
    """When the drawn graphs earned much less than the benchmark, the grade counted them: the
    leaderboard ranks that number too, says so, and keeps the landmarks on the benchmark."""
    from grader.feedback.leaderboard import _html
    from grader.feedback.standings import entry, ranked

    bench = [i.id for i in PART.graded()]
    drawn = [i.id for i in PART.checks()]
    results = {i: {"theirs": 90, "reference": 100, "naive": 200, "counted": False} for i in bench}
    results |= {i: {"theirs": 300, "reference": 100, "naive": 400, "counted": True} for i in drawn}
    tuned = entry(PART.id, "tuned", results)
    assert tuned.failed_check and tuned.ratio == pytest.approx(3.0)
    assert tuned.check == pytest.approx(3.0)
    assert tuned.landmarks["naive"] == pytest.approx(2.0)  # the benchmark's, not the drawn 4.0
    honest = {i: {**n, "theirs": 110, "counted": i in bench} for i, n in results.items()}
    fair = entry(PART.id, "fair", honest)
    assert not fair.failed_check and fair.ratio == pytest.approx(1.1)
    page = _html(ranked([tuned, fair]), lambda e: e.learner, [])
    rows = [r for r in page.split("<tr")[1:] if "<td" in r]
    assert len({r.count("<td") for r in rows}) == 1, rows  # every row has every column
    assert "tuned †" in page and "† The check failed" in page
    assert page.index(">fair<") < page.index(">tuned †<")  # ranked on what the grade counted


def test_ranking_from_the_graders_numbers_with_pseudonyms(course):
    course, key = course
    liar = {PART.id: {"transformer_h1": {"theirs": 1, "reference": 999999, "counted": True}}}
    for learner, fn, fake in (("ada", fuse_elementwise_chains, None), ("ben", no_fusion, liar)):
        nb = graded_notebook("fusion", PART.id, answer(PART, fn, learner), fake)
        grade_into(course, key, learner, "fusion", nb, learner)
    entries = {e.learner: e.ratio for e in collect(course)}
    assert entries["ben"] > 1.0  # the notebook's own claim was replaced by the grader's
    csv_path, html_path = write(course, pseudonyms=True)
    rows = list(csv.DictReader(csv_path.open()))
    ranked = [(r["rank"], float(r["hidden_geomean_over_reference"])) for r in rows
              if r["visible_instance"] == "transformer"]  # fmt: skip
    assert [r for r, _ in ranked] == ["1", "2"] and ranked[0][1] <= ranked[1][1]
    text = csv_path.read_text() + html_path.read_text()
    named = re.compile(r"\b(ada|ben)\b")  # as names: "benchmark" is a word of the page
    assert not named.search(text) and "learner-" in text
    write(course)
    assert "ada" in csv_path.read_text()
    # a worse resubmission does not lower ada's best (kept in gradebook/leaderboard.json)
    nb = graded_notebook("fusion", PART.id, answer(PART, one_kernel, "ada again"))
    grade_into(course, key, "ada", "fusion", nb, "ada again")
    write(course)
    assert {e.learner: e.ratio for e in collect(course)}["ada"] > entries["ada"]
    rows = list(csv.DictReader(csv_path.open()))
    ada = [r for r in rows if r["learner"] == "ada"]
    assert float(ada[0]["hidden_geomean_over_reference"]) == pytest.approx(entries["ada"], abs=1e-4)
    # the page says which column is the hidden ranking and which are visible results
    page = html_path.read_text()
    assert "the benchmark (ranked)" in page and "vs reference (geomean)" in page
    assert "graphs drawn for the learner (the check)" in page
    assert all(float(r["check_geomean_over_reference"]) > 0 for r in rows)
    assert "visible instances (the same for everybody): the result itself" in page


def test_a_learner_alone_sees_the_courses_landmarks_in_the_right_unit(course):
    """The memory challenge counts bytes on its arena instances (not "cycles"), and a learner
    alone in the class still sees the reference, greedy by size and the naive plan."""
    course, key = course
    part = PARTS["memory_challenge"]
    nb = graded_notebook("memory_planning", part.id, answer(part, greedy_by_size, "solo"))
    grade_into(course, key, "solo", "memory_planning", nb, "solo")
    _, html_path = write(course)
    page = html_path.read_text()
    assert "tight_40 (bytes)" in page or "sram_transformer (cycles)" in page
    assert "tight_40" in page and "(bytes)" in page
    for landmark in ("course reference", "greedy by size (simple baseline)", "no reuse (naive)",
                     "lower bound (peak live bytes"):  # fmt: skip
        assert landmark in page, landmark
    assert "smallest tiles" not in page and "no fusion" not in page  # the other challenges'
    lower = next(r for r in page.split("<tr") if "lower bound" in r)
    ratio = float(re.search(r"<td>(\d\.\d{3})</td>", lower).group(1))
    assert ratio <= 1.0, lower  # never above the reference, as a bound must be
    # it covers the tight arenas only, so it is not ranked among ratios over every instance:
    # it follows the ranked rows (the learner's and the other landmarks)
    table = page[page.index("<h2>memory_challenge") :]
    table = table[: table.index("</table>")]
    assert "lower bound" in table.split("<tr")[-1], table


def test_the_csv_opens_as_text_in_a_spreadsheet_and_look_alike_ids_are_named(course):
    course, key = course
    for learner in ('=HYPERLINK("http://evil.example","x")', "ada", "аda"):  # Cyrillic а
        nb = graded_notebook("fusion", PART.id, answer(PART, fuse_elementwise_chains, learner))
        grade_into(course, key, learner, "fusion", nb, learner)
    csv_path, html_path = write(course)
    cells = [c for row in csv.reader(csv_path.open()) for c in row]
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells)
    assert spreadsheet_safe("=1+1") == "'=1+1"
    assert look_alikes(["ada", "аda", "bob"]) == [("ada", "аda")]
    assert "look alike" in html_path.read_text()
