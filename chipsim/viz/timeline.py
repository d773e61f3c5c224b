"""Per-unit timeline of a run: one row per execution unit, one bar per instruction.

Works on any object with ``records`` (simulator records), ``kernels`` (with ``name``,
``start``, ``end``) and ``chip`` -- a :class:`~chipsim.runtime.report.Report`.
"""

from __future__ import annotations

from typing import Any

from chipsim.drawing import drawable
from chipsim.hw.isa import UNIT_TITLES
from chipsim.i18n import tr
from chipsim.viz.style import apply_style, color_for

ROWS = ("host", "alu", "mac", "simd", "tensor", "dma")


@drawable("timeline")
def plot_timeline(report: Any, ax: Any = None, unit: str = "us", max_labels: int = 30) -> Any:
    """Draw the timeline; returns the matplotlib axes.

    Args:
        report: a Report (duck-typed).
        ax: axes to draw on (a new figure if ``None``).
        unit: time axis unit, ``"us"`` or ``"cycles"``.
        max_labels: label at most this many kernels (the longest ones).
    """
    import matplotlib.pyplot as plt

    apply_style()
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 3.2))
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
    ax.set_yticks(range(len(ROWS)), [tr(UNIT_TITLES[u]) for u in ROWS])
    ax.set_ylim(-0.6, len(ROWS) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel(tr("time (µs)") if unit == "us" else tr("cycles"))
    longest = sorted(report.kernels, key=lambda k: -k.cycles)[:max_labels]
    for k in longest:
        ax.annotate(
            k.name,
            ((k.start + k.end) / 2 * scale, -0.55),
            ha="center",
            va="bottom",
            fontsize=8,
            annotation_clip=False,
            rotation=30,
        )
    ax.set_title(
        tr("{chip}: {cycles:,} cycles", chip=report.chip.name, cycles=report.cycles), pad=22
    )
    return ax
