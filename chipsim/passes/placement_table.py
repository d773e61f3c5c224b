"""The placement table a learner reads: one row per tensor, where it lives and why.

Its columns and the words of its cells are marked here for translation and shown in the
current language; the text form aligns its columns by display width (a Chinese character
takes two columns) and wraps the why column at :data:`WHY_WIDTH`. :mod:`chipsim.passes.placement`
decides the levels; ``str(placement)`` and Jupyter's view of it come from here.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from chipsim.i18n import N_, tr
from chipsim.target import Level
from chipsim.text import pad, text_width, wrap

if TYPE_CHECKING:
    from chipsim.passes.placement import Placement


#: Columns of the printed table's "why" column; a longer reason goes on to the next lines.
WHY_WIDTH = 44

#: A level as the placement table names it, in the reader's language (DRAM is 显存 in Chinese).
_LEVEL_NAMES = {Level.DRAM: N_("DRAM"), Level.SRAM: N_("SRAM"), Level.REG: N_("registers")}

#: The table's column titles, translated where shown.
_COLUMNS = {
    "tensor": N_("tensor"),
    "type": N_("type"),
    "role": N_("role"),
    "level": N_("level"),
    "offset": N_("offset"),
    "why": N_("why"),
}
#: Why an activation is in DRAM on a chip with an L2 cache.
THROUGH_L2 = N_("kernels pass it through DRAM; the L2 cache keeps it on chip while it is recent")
HOST_THROUGH_L2 = N_("the host writes it to DRAM; kernels read it through the L2 cache")


def table_rows(placement: Placement) -> list[dict[str, Any]]:
    """One row per tensor of the graph: where it lives and why, in the current language."""
    names = placement.graph.names()
    rows = []
    for v in (*placement.graph.inputs, *(n.output for n in placement.graph.nodes)):
        slot = placement.slots.get(v)
        label = f"{names[v]} ({v.hint})" if v.hint else names[v]
        if slot is None and v in placement.in_scratch:
            rows.append(
                {
                    "tensor": label,
                    "type": str(v.type),
                    "role": tr("fused intermediate"),
                    "level": tr("DRAM scratch"),
                    "offset": "-",
                    "why": tr(
                        "its kernel does not fit SRAM even in one-row tiles: it runs "
                        "in spill mode and keeps this in DRAM scratch"
                    ),  # fmt: skip
                }
            )
        elif slot is None:
            rows.append(
                {
                    "tensor": label,
                    "type": str(v.type),
                    "role": tr("fused intermediate"),
                    "level": tr("on-chip tiles"),
                    "offset": "-",
                    "why": tr("produced and consumed inside one kernel"),
                }
            )
        else:
            rows.append(
                {
                    "tensor": label,
                    "type": str(v.type),
                    "role": tr(slot.role),
                    "level": tr(_LEVEL_NAMES[slot.level]),
                    "offset": slot.offset,
                    "why": slot.reason(),
                }
            )
    return rows


def table_text(placement: Placement) -> str:
    """The table as text, its columns aligned by display width, its why column wrapped."""
    rows = placement.rows()
    cols = ["tensor", "type", "role", "level", "offset", "why"]
    titles = {c: tr(_COLUMNS[c]) for c in cols}
    whys = [wrap(str(r["why"]), WHY_WIDTH) for r in rows]  # a long reason: several lines
    widths = {
        c: max(text_width(titles[c]), *(text_width(str(r[c])) for r in rows)) for c in cols[:-1]
    }
    widths["why"] = max(text_width(titles["why"]), *(text_width(w) for ws in whys for w in ws))
    lines = [
        "  ".join(pad(titles[c], widths[c]) for c in cols),
        "  ".join("-" * widths[c] for c in cols),
    ]
    for r, why in zip(rows, whys, strict=True):
        cells = [pad(str(r[c]), widths[c]) for c in cols[:-1]]
        lines.append("  ".join([*cells, pad(why[0], widths["why"])]))
        indent = " " * sum(widths[c] + 2 for c in cols[:-1])
        lines += [indent + pad(more, widths["why"]) for more in why[1:]]
    spilled = sum(
        1
        for s in placement.slots.values()
        if s.role in ("input", "intermediate")
        and s.level == Level.DRAM
        and s.why not in (THROUGH_L2, HOST_THROUGH_L2)
    )
    if placement.cached:
        arena = tr(
            "activation arena: {arena:,} bytes in DRAM, used through the L2 cache",
            arena=placement.arena_bytes,
        )
    else:
        arena = tr(
            "activation arena: {arena:,} bytes; {spilled} activation(s) spilled to DRAM",
            arena=placement.arena_bytes,
            spilled=spilled,
        )
    lines.append(arena)
    return "\n".join(lines)


def table_html(placement: Placement) -> str:
    """The table as HTML (Jupyter shows it)."""
    cols = ["tensor", "type", "role", "level", "offset", "why"]
    head = "".join(f"<th>{html.escape(tr(_COLUMNS[c]))}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in cols) + "</tr>"
        for r in placement.rows()
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
