"""The API page's operator section, generated from the op registry.

``.. chipsim-ops::`` (inside an ``{eval-rst}`` block) writes an autosummary table of every
function of :mod:`chipsim.ops` -- one per public op of the registry, in name order -- and an
autodoc entry for each. A new op is one module of ``chipsim/ir/ops``: the page lists it with no
edit, and ``make translations`` brings its docstring into the Chinese catalogue like any other
text of the page.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def op_reference_lines() -> list[str]:
    """The reStructuredText the directive stands for (a table, then one entry per op)."""
    import chipsim.ops

    names = list(chipsim.ops.__all__)
    lines = [".. autosummary::", "   :nosignatures:", ""]
    lines += [f"   chipsim.ops.{name}" for name in names]
    lines.append("")
    for name in names:
        lines += [f".. autofunction:: chipsim.ops.{name}", ""]
    return lines


class OpReference(SphinxDirective):
    """``.. chipsim-ops::``: the reference of every op function, from the registry."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        source, _line = self.get_source_info()
        holder = nodes.Element()
        self.state.nested_parse(
            StringList(op_reference_lines(), source=source), self.content_offset, holder
        )
        return list(holder.children)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("chipsim-ops", OpReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
