"""Drawing is registered by viz: every result that draws itself finds its picture in the
registry (chipsim.drawing), and the registry is what the results call."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import chipsim as cs  # noqa: E402
from chipsim import drawing  # noqa: E402
from chipsim.errors import ChipsimError  # noqa: E402
from chipsim.viz import draw_graph, draw_memory_plan, plot_roofline, plot_timeline  # noqa: E402


@pytest.fixture(scope="module")
def program():
    w = np.ones((64, 64), np.float32)
    return cs.compile(lambda x: (x @ w).relu() + 1.0, np.zeros((64, 64), np.float32))


def test_viz_registers_one_function_per_picture():
    assert drawing.DRAWINGS == {
        "graph": draw_graph,
        "memory plan": draw_memory_plan,
        "roofline": plot_roofline,
        "timeline": plot_timeline,
    }


def test_every_result_draws_itself_through_the_registry(program):
    for ax in (
        program.graph.draw(),
        program.plan.draw(),
        program.report.timeline(),
        program.report.roofline(),
    ):
        drawn = len(ax.texts) + len(ax.patches) + len(ax.lines) + len(ax.collections)
        assert isinstance(ax, matplotlib.axes.Axes) and drawn > 0
    plt.close("all")


def test_a_drawing_registered_for_a_kind_is_the_one_a_result_uses(program, monkeypatch):
    calls = []
    monkeypatch.setitem(drawing.DRAWINGS, "graph", lambda g, ax=None, **kw: calls.append(g))
    program.graph.draw(show_types=False)
    assert calls == [program.graph]


def test_an_unregistered_picture_says_where_drawings_come_from():
    with pytest.raises(ChipsimError, match="registered by chipsim.viz"):
        drawing.draw("no such picture", object())
