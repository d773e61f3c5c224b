"""The feedback pictures are readable: no label runs into a title, and a transformer's timeline
gets the full width of the page."""

from __future__ import annotations

import pytest

from chipsim.passes.fusion import fuse_elementwise_chains
from grader import PARTS, score_answer
from grader.feedback.render import figure


@pytest.fixture(scope="module")
def transformer_picture():
    from grader.notebook import _RUNNERS
    from grader.scoring.answer import encode

    part = PARTS["fusion_challenge"]
    visible = [i.id for i in part.instances if not i.hidden]
    # the chain pass's answers (computed here: a test cell would withhold the pass itself)
    answers = {
        i.id: _RUNNERS[i.kind](i.build(), (fuse_elementwise_chains,)) for i in part.visible()
    }
    scored = score_answer(part, encode(part.id, answers), points=4, required=visible)
    shown = next(
        s for s in scored.instances if s.picture is not None and "transformer" in s.instance
    )
    return figure(shown.instance, *shown.picture)


def test_no_text_overlaps_a_subplot_title(transformer_picture):
    fig = transformer_picture
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    for ax in fig.axes:
        title = ax.title.get_window_extent(renderer)
        assert ax.title.get_text().startswith(("yours:", "reference:"))
        others = [t for t in ax.texts if t.get_text()]
        others += [t for t in ax.get_yticklabels() + ax.get_xticklabels() if t.get_text()]
        for text in others:
            assert not title.overlaps(text.get_window_extent(renderer)), text.get_text()


def test_each_timeline_is_wide_and_tall_enough(transformer_picture):
    fig = transformer_picture
    fig.canvas.draw()
    for ax in fig.axes:
        box = ax.get_position()
        width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
        assert width >= 8.5 and height >= 1.8, (width, height)


def test_a_feedback_picture_is_the_same_whatever_the_process_drew_before():
    """A notebook run in the grading process applies the course style to the whole process;
    the feedback picture (and a timeline drawn on given axes) must not change with it."""
    import matplotlib as mpl

    from chipsim.viz.style import apply_style
    from grader.feedback import render
    from grader.notebook import _RUNNERS
    from grader.scoring.answer import encode

    part = PARTS["fusion_chains"]
    visible = [i.id for i in part.instances if not i.hidden]
    answers = {
        i.id: _RUNNERS[i.kind](i.build(), (fuse_elementwise_chains,)) for i in part.visible()
    }
    scored = score_answer(part, encode(part.id, answers), points=3, required=visible)
    with mpl.rc_context():
        mpl.rcdefaults()
        before = render.picture_output(scored)["data"]["image/png"]
        apply_style()  # what a course notebook does first
        after = render.picture_output(scored)["data"]["image/png"]
        assert mpl.rcParams["axes.spines.top"] is False  # the process's style, left alone
    assert before == after


def test_no_picture_shows_a_match_where_the_part_lost_on_an_invalid_answer():
    """A learner whose plan was invalid on one instance saw a picture of another instance,
    where their plan matched the reference's: the picture said "perfect", the part said 0."""
    from dataclasses import replace

    from grader.feedback.render import picture_output
    from grader.notebook import _RUNNERS
    from grader.scoring.answer import encode

    part = PARTS["fusion_chains"]
    visible = [i.id for i in part.instances if not i.hidden]
    answers = {
        i.id: _RUNNERS[i.kind](i.build(), (fuse_elementwise_chains,)) for i in part.visible()
    }
    scored = score_answer(part, encode(part.id, answers), points=3, required=visible)
    matched, other = scored.instances[0], scored.instances[1]
    assert matched.picture is not None
    full = replace(matched, fraction=1.0)
    invalid = replace(other, fraction=0.0, picture=None, invalid=True)
    assert picture_output(replace(scored, instances=(full, invalid))) is None
    # a part that lost on the pictured instance itself still shows it
    lost = replace(matched, fraction=0.4)
    assert picture_output(replace(scored, instances=(lost, invalid))) is not None


def test_two_memory_plans_are_drawn_on_one_scale():
    """A plan 22% larger than the reference's looked as tall as it: each axis had its own."""
    from chipsim.passes.memory import UsageRecord, greedy_by_size, naive

    records = [UsageRecord("a", 4096, 0, 2), UsageRecord("b", 4096, 2, 4)]
    small, large = greedy_by_size(records), naive(records)
    assert large.arena_size > small.arena_size
    fig = figure("tight_h1", large, small)
    tops = [ax.get_ylim()[1] for ax in fig.axes]
    assert tops[0] == tops[1] and tops[0] >= large.arena_size / 1024


def test_the_feedback_shows_a_test_cell_as_the_learner_saw_it():
    """A learner found nbgrader's `### BEGIN HIDDEN TESTS / HIDDEN = True` in their feedback;
    the page shows the test cell as their notebook had it. A learner's own cell is untouched."""
    import nbformat

    from grader.feedback.page import sanitized

    test = nbformat.v4.new_code_cell(
        "# also checks hidden instances\nHIDDEN = False\n### BEGIN HIDDEN TESTS\nHIDDEN = True\n"
        '### END HIDDEN TESTS\nsubmit("fusion_patterns", pattern_of, may_fuse, hidden=HIDDEN)'
    )
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "points": 2}
    mine = nbformat.v4.new_code_cell("### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS\n")
    mine.metadata["nbgrader"] = {"grade": False, "solution": True}
    shown = sanitized(nbformat.v4.new_notebook(cells=[test, mine]))
    assert "HIDDEN = True" not in shown.cells[0].source
    assert shown.cells[0].source.endswith("HIDDEN = False\nsubmit(\"fusion_patterns\", "
                                          "pattern_of, may_fuse, hidden=HIDDEN)")  # fmt: skip
    assert shown.cells[1].source == mine.source


def test_the_timelines_name_the_kernels_that_fit_and_no_two_names_overlap(transformer_picture):
    """A new learner could not tell which colour was which kernel: the feedback's timelines
    had no names at all. Now each names the kernels whose span holds the name."""
    import itertools

    fig = transformer_picture
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        names = [t for t in ax.texts if getattr(t, "drawn", False)]
        assert names, ax.title.get_text()
        boxes = [t.get_window_extent(renderer) for t in names]
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b)
        ticks = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
        assert not any(box.overlaps(t) for box in boxes for t in ticks)
