"""Timeline pictures: kernel names never overlap each other, the title or the unit names.

Checked with matplotlib's own text extents after the figure is drawn at its final size, on
the timelines the book draws (4.2's double-buffering pair) and on a run of many short kernels
(what ``report.timeline()`` shows a learner for a whole model), in both languages.
"""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import chipsim as cs  # noqa: E402
from chipsim.i18n import use_language  # noqa: E402


def double_buffering_reports():
    """4.2 (execution_units): exp over 2**16 elements with and without double buffering."""
    reports = []
    for double_buffer in (True, False):
        with cs.device("edge-npu", double_buffer=double_buffer) as dev:
            cs.ops.exp(cs.tensor(np.linspace(-1, 1, 1 << 16, dtype=np.float32))).numpy()
        reports.append(dev.report)
    return reports


def many_kernels_report():
    """Eleven eager kernels, several of them too short for their names."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    with cs.device("edge-npu") as dev:
        w, b = cs.tensor(w), cs.tensor(b)
        x = cs.tensor(rng.standard_normal(256).astype(np.float32))
        for _ in range(3):
            h = cs.ops.exp(cs.ops.relu(w @ x + b)) * 2.0 + 1.0
        h.numpy()
    return dev.report


def drawn_names(ax, names):
    """The kernel-name texts the figure actually drew."""
    return [
        t
        for t in ax.texts
        if t.get_text() in names and t.get_visible() and getattr(t, "drawn", True)
    ]


def check_axes(fig, ax, report):
    renderer = fig.canvas.get_renderer()
    names = {k.name for k in report.kernels}
    labels = drawn_names(ax, names)
    boxes = [t.get_window_extent(renderer) for t in labels]
    for (a, box_a), (b, box_b) in itertools.combinations(zip(labels, boxes, strict=True), 2):
        assert not box_a.overlaps(box_b), f"{a.get_text()!r} overlaps {b.get_text()!r}"
    title = ax.title.get_window_extent(renderer)
    ticks = [t.get_window_extent(renderer) for t in ax.get_yticklabels()]
    for label, box in zip(labels, boxes, strict=True):
        assert not box.overlaps(title), f"{label.get_text()!r} overlaps the title"
        assert not any(box.overlaps(t) for t in ticks), f"{label.get_text()!r} on a unit name"
        frame = ax.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1  # inside the axes
    return labels


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_book_double_buffering_timelines(language):
    reports = double_buffering_reports()
    with use_language(language):
        fig, axes = plt.subplots(2, 1, figsize=(10, 5.2), sharex=True, layout="constrained")
        for ax, report in zip(axes, reports, strict=True):
            report.timeline(ax=ax)
            ax.set_title(f"{report.cycles:,} cycles", pad=20)  # as the chapter's cell does
        fig.canvas.draw()
        named = [check_axes(fig, ax, r) for ax, r in zip(axes, reports, strict=True)]
        plt.close(fig)
    assert all(len(n) == 1 for n in named)  # the one kernel, exp, is named in both


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_many_short_kernels_keep_their_names_apart(language):
    report = many_kernels_report()
    assert len(report.kernels) >= 10
    with use_language(language):
        ax = report.timeline()
        fig = ax.figure
        fig.canvas.draw()
        labels = check_axes(fig, ax, report)
        fig.savefig(__import__("io").BytesIO(), bbox_inches="tight")  # a second draw
        again = check_axes(fig, ax, report)
        plt.close(fig)
    assert 1 <= len(labels) < len(report.kernels)  # the long ones named, the rest by colour
    assert [t.get_text() for t in again] == [t.get_text() for t in labels]
