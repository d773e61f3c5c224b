"""The helpers the released notebooks give learners keep their promises."""

from __future__ import annotations

import nbformat
import pytest
from grading_course import ROOT


def given_code(assignment: str, *grade_ids: str) -> dict:
    """Run the released cells ``grade_ids`` (given code; a solution cell up to its stub)."""
    nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", 4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
    namespace: dict = {}
    for gid in grade_ids:
        exec(compile(cells[gid], f"<{gid}>", "exec"), namespace)  # noqa: S102 - our own notebook
    return namespace


def test_cycles_of_returns_none_for_a_grouping_that_does_not_compile():
    ns = given_code("fusion", "given-02", "fusion_challenge_code")
    graph = ns["instances"]("fusion_chains")["chains_a"]
    ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
    users = ns["consumers"](graph)
    # a node with its consumer's consumer but without the consumer: the groups wait on each other
    a = next(i for i in ops if users[i] and users[users[i][0]])
    b = users[a][0]
    c = users[b][0]
    rest = [i for i in ops if i not in (a, b, c)]
    non_convex = [[a, c], [b], *([i] for i in rest)]
    assert ns["cycles_of"](graph, non_convex) is None
    singles = [[i] for i in ops]
    assert isinstance(ns["cycles_of"](graph, singles), int)


def test_a_function_too_slow_for_the_graded_cell_is_told_and_fails_validate(monkeypatch):
    """The graded cell runs every instance, hidden ones too, within the cell's time limit: a
    test cell whose pace would run out of it says so, and Validate fails the part, as the
    grader would (a learner's part 4 once passed Validate and scored 0)."""
    import time

    import grader.notebook as nb
    from chipsim.passes.fusion import Partition

    monkeypatch.setattr(nb, "CELL_SECONDS", 0.8)

    def slow(graph, chip):
        time.sleep(0.15)
        return Partition([[i] for i in range(len(graph.nodes))])

    answer = nb.submit("fusion_chains", slow, score=False)
    assert "Too slow for the grader" in answer.text()
    assert "all 8 instances of the part" in answer.text()
    assert "at most about 0.1 s per instance" in answer.text()  # the limit over 8
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(nb.NotFullCredit, match="Too slow for the grader"):
        nb.submit("fusion_chains", slow)
    monkeypatch.setattr(nb, "CELL_SECONDS", 60.0)
    assert "Too slow" not in nb.submit("fusion_chains", slow, score=False).text()


def test_an_answer_too_large_for_the_grader_is_told_and_fails_validate(monkeypatch):
    """The graded cell answers every instance, and the grader refuses an answer over its size
    cap (the part scores 0): a test cell whose answer, projected to all instances, would pass
    the cap says so, and Validate fails the part, as for a cell that would run out of time."""
    import grader.notebook as nb
    from chipsim.passes.fusion import Partition

    def singles(graph, chip):
        return Partition([[i] for i in range(len(graph.nodes))])

    small = nb.submit("fusion_chains", singles, score=False)
    chars = nb.size(small.doc)  # the two visible instances' answer
    assert "Too large" not in small.text() and "size limit" not in small.text()

    monkeypatch.setattr(nb, "MAX_ANSWER_CHARS", chars)  # 8 instances project to 4x the cap
    answer = nb.submit("fusion_chains", singles, score=False)
    assert "Too large for the grader" in answer.text()
    assert "all 8 instances of the part" in answer.text()
    assert f"at most about {chars / 8:,.0f} characters per instance" in answer.text()
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(nb.NotFullCredit, match="Too large for the grader"):
        nb.submit("fusion_chains", singles)

    monkeypatch.setattr(nb, "MAX_ANSWER_CHARS", 6 * chars)  # 4x: past half the cap, within it
    monkeypatch.delenv("NBGRADER_EXECUTION")
    text = nb.submit("fusion_chains", singles, score=False).text()
    assert "Close to the grader's size limit" in text and "Too large" not in text
