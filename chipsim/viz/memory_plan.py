"""The memory-plan picture: time on x, address on y, one rectangle per tensor.

A tensor live over ``[first, last)`` at ``[offset, offset + size)`` is a rectangle; empty space
between rectangles is fragmentation. A dashed line marks the lower bound (peak live bytes).
Duck-typed: any object with ``records``, ``offsets``, ``arena_size``, ``lower_bound`` works.
"""

from __future__ import annotations

from typing import Any

from chipsim.drawing import drawable
from chipsim.i18n import tr


def _unit(nbytes: int) -> tuple[str, int]:
    for name, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= 4 * scale:
            return name, scale
    return "bytes", 1


@drawable("memory plan")
def draw_memory_plan(
    plan: Any, ax: Any = None, *, labels: bool | None = None, title: str | None = None
) -> Any:
    """Draw ``plan`` on ``ax`` (a new 7 x 3.5 inch figure by default) and return the axes.

    Args:
        plan: a :class:`~chipsim.passes.memory.plan.MemoryPlan`.
        ax: matplotlib axes to draw on.
        labels: write tensor ids in rectangles large enough to hold them (default: when there
            are at most 60 tensors).
        title: axes title (default: strategy, arena and lower bound).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
    arena = max(plan.arena_size, 1)
    unit, scale = _unit(arena)
    steps = max((r.last for r in plan.records), default=1)
    labels = len(plan.records) <= 60 if labels is None else labels
    colors = plt.get_cmap("tab20").colors
    for k, r in enumerate(plan.records):
        y = plan.offsets[r.id] / scale
        h = r.size / scale
        ax.add_patch(
            Rectangle((r.first, y), r.length, h, facecolor=colors[k % 20], edgecolor="black",
                      linewidth=0.5)
        )  # fmt: skip
        # Only label rectangles big enough to read: 3% of the time axis, 5% of the arena.
        if labels and r.length >= 0.03 * steps and r.size >= 0.05 * arena:
            ax.text(r.first + r.length / 2, y + h / 2, r.id, ha="center", va="center",
                    fontsize=7, clip_on=True)  # fmt: skip
    lb = plan.lower_bound / scale
    ax.axhline(lb, color="black", linestyle="--", linewidth=1, label=tr("lower bound"))
    ax.set_xlim(0, steps)
    ax.set_ylim(0, max(arena / scale, lb) * 1.05)
    ax.set_xlabel(tr("schedule step"))
    ax.set_ylabel(tr("address ({unit})", unit=unit))
    if title is None:
        title = tr(
            "{strategy}: arena {arena:.4g} {unit}, lower bound {bound:.4g} {unit}",
            strategy=plan.strategy or tr("plan"),
            arena=plan.arena_size / scale,
            unit=unit,
            bound=lb,
        )
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    return ax
