"""``make leaderboard`` ranks the grader's own challenge numbers, never what a notebook says."""

from __future__ import annotations

import csv

import nbformat
import pytest
from grading_course import ROOT

from chipsim.grading import PARTS, score_answer, submit
from chipsim.grading.answer import MIME
from chipsim.grading.leaderboard import collect, measured, write
from chipsim.grading.nbgrader_rescore import RescoreAnswers
from chipsim.passes.fusion import fuse_elementwise_chains, no_fusion

PART = PARTS["fusion_challenge"]
VISIBLE = [i.id for i in PART.instances if not i.hidden]


@pytest.fixture(scope="module")
def answers():
    return {
        "ada": submit(PART.id, fuse_elementwise_chains, score=False).doc,
        "ben": submit(PART.id, no_fusion, score=False).doc,
    }


def graded_notebook(doc, fake_measured=None):
    """The released fusion notebook, its challenge test cell answered with ``doc``."""
    nb = nbformat.read(ROOT / "exercises" / "fusion" / "fusion.ipynb", 4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == PART.id:
            cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: doc})]
    if fake_measured is not None:
        nb.metadata["chipsim"] = {"measured": fake_measured}
    return nb


def test_measured_keeps_the_visible_valid_instances(answers):
    score = score_answer(PART, answers["ada"], points=4, required=VISIBLE)
    kept = measured(score)
    assert sorted(kept) == sorted(VISIBLE)
    assert all({"theirs", "reference", "naive"} <= set(n) for n in kept.values())


def test_ranking_from_the_graders_numbers_with_pseudonyms(tmp_path, answers):
    course = tmp_path / "course"
    key = tmp_path / "secret.key"
    key.write_bytes(b"the leaderboard test secret, 32+ bytes")
    key.chmod(0o600)
    liar = {PART.id: {"transformer": {"theirs": 1, "reference": 214387, "naive": 9}}}
    for learner, fake in (("ada", None), ("ben", liar)):
        nb = graded_notebook(answers[learner], fake)
        rescorer = RescoreAnswers()
        rescorer.config.HiddenInstances.secret_file = str(key)
        nb, _ = rescorer.preprocess(nb, {"nbgrader": {"assignment": "fusion"}})
        folder = course / "gradebook" / "autograded" / learner / "fusion"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "fusion.ipynb")
    entries = {(e.learner, e.instance): e.theirs for e in collect(course)}
    assert entries[("ben", "transformer")] > 1  # the notebook's own claim was replaced
    assert entries[("ada", "transformer")] < entries[("ben", "transformer")]
    csv_path, html_path = write(course, pseudonyms=True)
    rows = list(csv.DictReader(csv_path.open()))
    transformer = [r for r in rows if r["instance"] == "transformer"]
    assert [r["rank"] for r in transformer] == ["1", "2"]
    text = csv_path.read_text() + html_path.read_text()
    assert "ada" not in text and "ben" not in text and "learner-" in text
    write(course)
    assert "ada" in csv_path.read_text()
    # a worse resubmission does not lower ada's best (kept in gradebook/leaderboard.json)
    nb = graded_notebook(answers["ben"])
    nb, _ = rescorer.preprocess(nb, {"nbgrader": {"assignment": "fusion"}})
    nbformat.write(nb, course / "gradebook" / "autograded" / "ada" / "fusion" / "fusion.ipynb")
    write(course)
    rows = list(csv.DictReader(csv_path.open()))
    ada = [r for r in rows if r["instance"] == "transformer" and r["learner"] == "ada"]
    assert int(ada[0]["cycles"]) == entries[("ada", "transformer")]
