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
    import grader.pace as pace
    from chipsim.passes.fusion import Partition

    monkeypatch.setattr(pace, "CELL_SECONDS", 0.8)

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
    monkeypatch.setattr(pace, "CELL_SECONDS", 60.0)
    assert "Too slow" not in nb.submit("fusion_chains", slow, score=False).text()


def test_a_function_slow_only_on_the_hidden_sizes_is_told_too(monkeypatch):
    """The hidden instances come in larger sizes than the visible ones, and a search's time
    grows with size: the test cell times the function on practice draws made like the hidden
    instances, so a pass quick on the visible graphs and slow on the larger ones is warned
    (projected from the visible instances alone, it would not be)."""
    import time

    import grader.notebook as nb
    import grader.pace as pace
    from chipsim.passes.fusion import Partition
    from grader.problems.families import compile_with

    visible = nb.instances("fusion_challenge")
    largest = max(compile_with(g).report.cycles for g in visible.values())

    def slow_when_large(graph, chip):
        if compile_with(graph).report.cycles > 2 * largest:
            time.sleep(0.3)
        return Partition([[i] for i, n in enumerate(graph.nodes) if n.op != "constant"])

    monkeypatch.setattr(pace, "CELL_SECONDS", 1.0)
    answer = nb.submit("fusion_challenge", slow_when_large, score=False)
    assert "Too slow for the grader" in answer.text()
    assert "practice draws made like the hidden instances" in answer.text()
    part = nb.get_part("fusion_challenge")
    draws = pace.practice_draws(part)
    seen = pace.paced(draws, nb._run((slow_when_large,)), pace.Pace(0.0, 2))
    assert seen.drawn < len(draws)  # stopped once the graded cell was sure to run out of time
    assert seen.projected(part) > 1.0
    monkeypatch.setattr(pace, "CELL_SECONDS", 1000.0)
    seen = pace.paced(draws, nb._run((slow_when_large,)), pace.Pace(0.0, 2))
    assert seen.drawn == len(draws) == 8 and seen.sampled >= 0.3  # some draws are that large
    # projected from the two visible instances alone (0.05 s), it would fit the 1 s cell
    assert pace.Pace(0.05, 2).projected(nb.get_part("fusion_challenge")) < 1.0


@pytest.mark.parametrize("part_id", ["fusion_chains", "memory_first_fit", "instgen_double"])
def test_the_practice_draws_stand_for_every_hidden_instance_once(part_id):
    """One practice draw per size of each hidden family (several for a family without
    sizes), weighing as many hidden instances as it stands for: the projection counts each
    hidden instance once, at its own size."""
    from grader.pace import practice_draws
    from grader.problems.parts import PARTS

    part = PARTS[part_id]
    draws = practice_draws(part)
    assert sum(d.weight for d in draws) == pytest.approx(len(part.hidden()))
    rows = {(i.family, i.stratum) for i in part.hidden()}
    assert len(draws) == sum(1 if s is not None else 4 for _f, s in rows)


def test_an_answer_too_large_for_the_grader_is_told_and_fails_validate(monkeypatch):
    """The graded cell answers every instance, and the grader refuses an answer over its size
    cap (the part scores 0): a test cell whose answer, projected to all instances, would pass
    the cap says so, and Validate fails the part, as for a cell that would run out of time."""
    import grader.notebook as nb
    import grader.pace as pace
    from chipsim.passes.fusion import Partition

    def singles(graph, chip):
        return Partition([[i] for i in range(len(graph.nodes))])

    small = nb.submit("fusion_chains", singles, score=False)
    chars = nb.size(small.doc)  # the two visible instances' answer
    assert "Too large" not in small.text() and "size limit" not in small.text()

    monkeypatch.setattr(pace, "MAX_ANSWER_CHARS", chars)  # 8 instances project to 4x the cap
    answer = nb.submit("fusion_chains", singles, score=False)
    assert "Too large for the grader" in answer.text()
    assert "all 8 instances of the part" in answer.text()
    assert f"at most about {chars / 8:,.0f} characters per instance" in answer.text()
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    with pytest.raises(nb.NotFullCredit, match="Too large for the grader"):
        nb.submit("fusion_chains", singles)

    monkeypatch.setattr(pace, "MAX_ANSWER_CHARS", 6 * chars)  # 4x: past half the cap, within it
    monkeypatch.delenv("NBGRADER_EXECUTION")
    text = nb.submit("fusion_chains", singles, score=False).text()
    assert "Close to the grader's size limit" in text and "Too large" not in text


@pytest.mark.parametrize("score", [4.0, 3.5])
def test_full_points_on_a_challenges_visible_instances_say_the_hidden_ones_decide(score):
    """A new learner's epilogue-only pass showed 4 of 4 on the fusion challenge's two visible
    instances and was graded 3.262 on the hidden ones, with no word of warning in the cell."""
    from types import SimpleNamespace

    import grader.notebook as nb
    from grader.problems.parts import get_part

    shown = SimpleNamespace(score=score, points=4.0, explain=lambda: "(explanation)")
    text = nb.Answer(get_part("fusion_challenge"), {"answers": {}}, shown).text()
    warned = "Full points on these 2 visible instances do not promise full points on the 24 graphs"
    assert (warned in text) == (score == 4.0)
    assert "of the benchmark" in text if score == 4.0 else "do not promise" not in text
    memory = nb.Answer(get_part("memory_challenge"), {"answers": {}}, shown).text()
    assert (" hidden ones: an open challenge is graded" in memory) == (score == 4.0)
    # the fusion challenge counts a benchmark, checked on graphs drawn for the submission
    assert "on the benchmark's hidden instances, and checked on others it draws" in text
    chains = SimpleNamespace(score=3.0, points=3.0, explain=lambda: "(explanation)")
    plain = nb.Answer(get_part("fusion_chains"), {"answers": {}}, chains).text()
    assert "do not promise" not in plain and "benchmark" not in plain
    assert "on hidden instances it draws for your submission" in plain
