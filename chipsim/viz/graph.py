"""Draw a graph with matplotlib: one row per layer (longest path from the inputs).

Inputs are at the top, outputs at the bottom; nodes are coloured by pattern class so the
fusion chapter can point at them. Constants are drawn small and grey.
"""

from __future__ import annotations

from typing import Any

from chipsim.drawing import drawable
from chipsim.i18n import tr
from chipsim.ir.graph import Graph, Value
from chipsim.ir.ops import Pattern, get_op

PATTERN_COLORS = {
    Pattern.ELEMENTWISE: "#8ecae6",
    Pattern.BROADCAST: "#a8dadc",
    Pattern.INJECTIVE: "#ffd166",
    Pattern.REDUCTION: "#f4a261",
    Pattern.CONTRACTION: "#e76f51",
    Pattern.OPAQUE: "#d9d9d9",
}
INPUT_COLOR = "#b7e4c7"


def layers(graph: Graph) -> dict[Value, int]:
    """Layer of each value: 0 for inputs and constants, else 1 + the deepest operand."""
    depth: dict[Value, int] = {v: 0 for v in graph.inputs}
    for node in graph.nodes:
        depth[node.output] = 1 + max((depth[v] for v in node.inputs), default=-1)
    return depth


@drawable("graph")
def draw_graph(graph: Graph, ax: Any = None, *, show_types: bool = True, groups: Any = None) -> Any:
    """Draw ``graph``; returns the matplotlib Axes.

    Args:
        ax: an Axes to draw into (a new figure if None).
        show_types: print each value's type under its op name.
        groups: optional list of lists of node indices (a fusion partition) drawn as boxes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    depth = layers(graph)
    names = graph.names()
    rows: dict[int, list[Value]] = {}
    for v in (*graph.inputs, *(n.output for n in graph.nodes)):
        rows.setdefault(depth[v], []).append(v)
    width = max(len(r) for r in rows.values())
    pos: dict[Value, tuple[float, float]] = {}
    for d, vals in rows.items():
        for i, v in enumerate(vals):
            pos[v] = ((i - (len(vals) - 1) / 2) * 2.4, -d * 1.3)
    if ax is None:
        _, ax = plt.subplots(figsize=(min(2.2 + 2.1 * width, 12), 1.0 + 1.05 * len(rows)))
    producer = graph.producer()
    for node in graph.nodes:
        for v in node.inputs:
            (x0, y0), (x1, y1) = pos[v], pos[node.output]
            ax.annotate(
                "",
                xy=(x1, y1 + 0.28),
                xytext=(x0, y0 - 0.28),
                arrowprops={"arrowstyle": "->", "color": "#555555", "lw": 1.1},
            )
    for v, (x, y) in pos.items():
        node = producer.get(v)
        if node is None:
            label, color, small = tr("{value} input", value=names[v]), INPUT_COLOR, False
        else:
            label = f"{names[v]} {node.op}"
            small = node.is_constant
            color = PATTERN_COLORS[get_op(node.op).pattern]
        text = f"{label}\n{v.type}" if show_types else label
        ax.text(
            x,
            y,
            text,
            ha="center",
            va="center",
            fontsize=7.5 if small else 9,
            bbox={"boxstyle": "round,pad=0.35", "fc": color, "ec": "#333333", "lw": 0.8},
        )
    if groups:
        for group in groups:
            pts = [pos[graph.nodes[i].output] for i in group]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            ax.add_patch(
                FancyBboxPatch(
                    (min(xs) - 1.1, min(ys) - 0.5),
                    max(xs) - min(xs) + 2.2,
                    max(ys) - min(ys) + 1.0,
                    boxstyle="round,pad=0.05",
                    fc="none",
                    ec="#c1121f",
                    lw=1.4,
                    ls="--",
                )
            )
    for v in graph.outputs:
        x, y = pos[v]
        ax.annotate(
            tr("output"),
            xy=(x, y - 0.3),
            xytext=(x, y - 0.85),
            ha="center",
            fontsize=8,
            arrowprops={"arrowstyle": "<-", "color": "#555555"},
        )
    xs = [p[0] for p in pos.values()]
    ax.set_xlim(min(xs) - 1.6, max(xs) + 1.6)
    ax.set_ylim(-(len(rows) - 1) * 1.3 - 1.2, 0.7)
    ax.set_axis_off()
    ax.set_title(tr("{graph}: {n} nodes", graph=graph.name, n=len(graph.nodes)), fontsize=10)
    return ax
