"""Per-unit timeline of a run: one row per execution unit, one bar per instruction.

Works on any object with ``records`` (simulator records), ``kernels`` (with ``name``,
``start``, ``end``) and ``chip`` -- a :class:`~chipsim.runtime.report.Report`.

Kernel names go into a lane of their own above the units, each inside its kernel's span, and
only where it fits: the check is made when the figure is drawn, at its final size, so a name
never overlaps another name, the axes' title or the units' rows.
"""

from __future__ import annotations

from typing import Any

from matplotlib.text import Text

from chipsim.drawing import drawable
from chipsim.hw.isa import UNIT_TITLES
from chipsim.i18n import tr
from chipsim.viz.style import apply_style, color_for

ROWS = ("host", "alu", "mac", "simd", "tensor", "dma")
LANE = -1  # the kernels' lane, above the first unit (the y axis is inverted)
_PAD_PX = 3  # free pixels a name keeps to each side of its span


@drawable("timeline")
def plot_timeline(report: Any, ax: Any = None, unit: str = "us", max_labels: int = 30) -> Any:
    """Draw the timeline; returns the matplotlib axes.

    Args:
        report: a Report (duck-typed).
        ax: axes to draw on (a new figure if ``None``).
        unit: time axis unit, ``"us"`` or ``"cycles"``.
        max_labels: name at most this many kernels (the longest ones) in a lane above the
            units; ``0``: no lane (e.g. when a legend names the kernels).
    """
    import matplotlib.pyplot as plt

    if ax is None:  # a figure of its own takes the course style; given axes keep theirs
        apply_style()
        _, ax = plt.subplots(figsize=(10, 3.2), layout="constrained")
    scale = 1e6 / report.chip.clock_hz if unit == "us" else 1.0
    owner = {}  # record index -> kernel number, for colouring
    for i, k in enumerate(report.kernels):
        for idx in range(k.first, k.stop):
            owner[idx] = i
    bars: dict[str, list[tuple[float, float]]] = {u: [] for u in ROWS}
    colors: dict[str, list[str]] = {u: [] for u in ROWS}
    for n, r in enumerate(report.records):
        bars[r.instr.unit].append((r.start * scale, max(r.end - r.start, 1) * scale))
        colors[r.instr.unit].append(color_for(owner[n]) if n in owner else "#777777")
    for y, u in enumerate(ROWS):
        if bars[u]:
            ax.broken_barh(bars[u], (y - 0.4, 0.8), facecolors=colors[u], linewidth=0)
    ticks = [tr(UNIT_TITLES[u]) for u in ROWS]
    top = -0.6
    if max_labels > 0 and report.kernels:
        _kernel_lane(ax, report.kernels, scale, max_labels)
        ticks, top = [tr("kernel"), *ticks], LANE - 0.6
    ax.set_yticks(range(len(ROWS) - len(ticks), len(ROWS)), ticks)
    ax.set_ylim(top, len(ROWS) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel(tr("time (µs)") if unit == "us" else tr("cycles"))
    if unit != "us":  # 1,200,000 on the axis, not 1.2 under a "1e6" in its corner
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.set_title(tr("{chip}: {cycles:,} cycles", chip=report.chip.name, cycles=report.cycles))
    return ax


def _kernel_lane(ax: Any, kernels: Any, scale: float, max_labels: int) -> None:
    """Each kernel's span as a pale bar in the lane, the longest ones named inside it."""
    spans = [(k.start * scale, max(k.end - k.start, 1) * scale) for k in kernels]
    ax.broken_barh(
        spans,
        (LANE - 0.4, 0.8),
        facecolors=[color_for(i) for i in range(len(kernels))],
        alpha=0.25,
        linewidth=0,
    )
    placed: list[Any] = []  # the names' boxes drawn so far in this draw of the figure
    order = sorted(range(len(kernels)), key=lambda i: (-kernels[i].cycles, i))[:max_labels]
    for rank, i in enumerate(order):
        k = kernels[i]
        label = KernelLabel(k.start * scale, k.end * scale, placed, first=rank == 0, text=k.name)
        ax.add_artist(label)


class KernelLabel(Text):
    """A kernel's name, centred in its span in the kernels' lane.

    Drawn only if it fits inside the span and overlaps no name drawn before it in the same
    draw (names are added longest kernel first); ``drawn`` says whether it was.
    """

    def __init__(self, x0: float, x1: float, placed: list, first: bool, text: str):
        super().__init__((x0 + x1) / 2, LANE, text, ha="center", va="center", fontsize=8)
        self.span, self.placed, self.first = (x0, x1), placed, first
        self.drawn = False

    def draw(self, renderer: Any) -> None:
        if self.first:
            self.placed.clear()  # a new draw of the figure
        self.drawn = False
        if not self.get_visible() or self.axes is None:
            return
        self.set_transform(self.axes.transData)
        box = self.get_window_extent(renderer)
        (x0, _), (x1, _) = self.axes.transData.transform([(self.span[0], 0), (self.span[1], 0)])
        if box.x0 < x0 + _PAD_PX or box.x1 > x1 - _PAD_PX:
            return  # wider than its kernel: the colour and the legend name it
        if any(box.overlaps(other) for other in self.placed):
            return
        super().draw(renderer)
        self.placed.append(box)
        self.drawn = True
