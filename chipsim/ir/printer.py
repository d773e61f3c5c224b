"""Text views of a graph: SSA text, a cost table and an HTML table for notebooks.

The SSA text looks like::

    graph(%0: f32[4]) {
      %1 = constant(1.0) : f32[]
      %2 = add(%0, %1) : f32[4]
      ...
      return %4
    }
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from chipsim.i18n import N_, tr
from chipsim.ir.ops import OPS, flops, get_op
from chipsim.text import pad, text_width

if TYPE_CHECKING:  # types only: graph.py imports this module (a graph prints itself)
    from chipsim.ir.graph import Graph, Node, Value


def _attr_text(node: Node) -> str:
    if node.is_constant and "value" in node.attrs:
        return ""
    # An unknown op must still print: the verifier shows it in its error message.
    specs = OPS[node.op].attrs if node.op in OPS else {}
    shown = [
        f"{k}={v!r}"
        for k, v in node.attrs.items()
        if v is not None and not (k in specs and specs[k].default == v)
    ]
    return " {" + ", ".join(shown) + "}" if shown else ""


def _name(v: Value, names: dict[Value, str]) -> str:
    return names.get(v, "%?")


def format_node(node: Node, names: dict[Value, str]) -> str:
    """One SSA line: ``%3 = add(%1, %2) : f32[4, 8]``."""
    if node.is_constant and "value" in node.attrs:
        args = repr(node.attrs["value"])
    else:
        args = ", ".join(_name(v, names) for v in node.inputs)
    return f"{_name(node.output, names)} = {node.op}({args}){_attr_text(node)} : {node.type}"


def graph_lines(graph: Graph) -> list[str]:
    """The SSA text as lines; line 0 is the header, line i+1 is node i, the last is return."""
    names = graph.names()
    params = ", ".join(f"{names[v]}: {v.type}" for v in graph.inputs)
    lines = [f"{graph.name}({params}) {{"]
    lines += ["  " + format_node(n, names) for n in graph.nodes]
    lines.append("  return " + ", ".join(_name(v, names) for v in graph.outputs))
    lines.append("}")
    return lines


def format_graph(graph: Graph) -> str:
    return "\n".join(graph_lines(graph))


def excerpt(graph: Graph, line: int, context: int = 2) -> str:
    """Lines of the SSA text around ``line`` with a ``>>`` marker on it (for error messages)."""
    lines = graph_lines(graph)
    lo, hi = max(0, line - context), min(len(lines), line + context + 1)
    out = []
    for i in range(lo, hi):
        out.append(("  >> " if i == line else "     ") + lines[i])
    return "\n".join(out)


def cost_rows(graph: Graph) -> list[dict[str, object]]:
    """One row per node: name, op, pattern, type, FLOPs, bytes read, bytes written."""
    names = graph.names()
    rows = []
    for node in graph.nodes:
        opdef = get_op(node.op)
        in_types = [v.type for v in node.inputs]
        rows.append(
            {
                "value": names[node.output],
                "op": node.op,
                "pattern": str(opdef.pattern),
                "type": str(node.type),
                "flops": flops(node.op, in_types, node.type, node.attrs),
                "bytes_read": opdef.bytes_read(in_types),
                "bytes_written": opdef.bytes_written(node.type),
            }
        )
    return rows


#: The cost table's columns (keys of :func:`cost_rows`) and their titles, translated where shown.
_COLUMNS = {
    "value": N_("value"),
    "op": N_("op"),
    "pattern": N_("pattern"),
    "type": N_("type"),
    "flops": N_("flops"),
    "bytes_read": N_("bytes_read"),
    "bytes_written": N_("bytes_written"),
}


def _shown(c: str, v: object) -> str:
    """A cell as printed: numbers with thousands separators, pattern names translated."""
    if isinstance(v, int):
        return f"{v:,}"
    return tr(str(v)) if c == "pattern" else str(v)


def format_table(graph: Graph) -> str:
    rows = cost_rows(graph)
    titles = {c: tr(_COLUMNS[c]) for c in _COLUMNS}
    widths = {
        c: max([text_width(titles[c])] + [text_width(_shown(c, r[c])) for r in rows])
        for c in _COLUMNS
    }

    def cell(c: str, v: object) -> str:
        text = _shown(c, v)
        return pad(text, widths[c], right=True) if isinstance(v, int) else pad(text, widths[c])

    lines = ["  ".join(pad(titles[c], widths[c]) for c in _COLUMNS)]
    lines.append("  ".join("-" * widths[c] for c in _COLUMNS))
    lines += ["  ".join(cell(c, r[c]) for c in _COLUMNS) for r in rows]
    total_f = sum(int(r["flops"]) for r in rows)  # type: ignore[call-overload]
    total_b = sum(int(r["bytes_read"]) + int(r["bytes_written"]) for r in rows)  # type: ignore[call-overload]
    lines.append(
        tr(
            "total: {flops:,} FLOPs, {bytes:,} bytes moved by {ops} ops",
            flops=total_f,
            bytes=total_b,
            ops=len(rows),
        )
    )
    return "\n".join(lines)


def format_html(graph: Graph) -> str:
    """SSA text and the cost table as HTML, for Jupyter's rich display."""
    rows = cost_rows(graph)
    head = "".join(f"<th>{html.escape(tr(title))}</th>" for title in _COLUMNS.values())
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_shown(c, r[c]))}</td>" for c in _COLUMNS) + "</tr>"
        for r in rows
    )
    return (
        f"<pre>{html.escape(format_graph(graph))}</pre>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )
