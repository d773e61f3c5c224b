"""Pictures: graph drawings, per-unit timelines, memory plans (address x time), rooflines,
and ``glue`` for the book.

Each drawing function registers itself with :mod:`chipsim.drawing` for the results that draw
themselves (``graph.draw()``, ``plan.draw()``, ``report.timeline()``, ``report.roofline()``);
importing this package registers them all. Matplotlib is imported only when something is
drawn. The Chinese font chipsim ships (:mod:`chipsim.viz.fonts`) is registered with
:func:`chipsim.i18n.on_matplotlib`, so figures in the Chinese edition draw their labels.
"""

from chipsim.i18n import on_matplotlib
from chipsim.viz.fonts import use_cjk_fallback
from chipsim.viz.glue import glue
from chipsim.viz.graph import draw_graph
from chipsim.viz.memory_plan import draw_memory_plan
from chipsim.viz.roofline import plot_roofline
from chipsim.viz.timeline import plot_timeline

on_matplotlib(use_cjk_fallback)

__all__ = ["draw_graph", "draw_memory_plan", "glue", "plot_roofline", "plot_timeline"]
