"""Text tables that chapters print line up in every edition.

``str.format`` and ``str.ljust`` count characters, but a Chinese character takes two columns:
a table padded that way is ragged in the Chinese edition. Chapters pad text with
``chipsim.text.pad`` (or put the field into a ``tr`` template, which pads by display width);
a width on a string field of an f-string, or ``ljust``/``rjust``/``center``, is refused here.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import jupytext
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bookbuild import ROOT, notebook_pages  # noqa: E402

#: a format spec with a width on a string ("12s", ">16s") -- numbers ("5d", ">9,") are fine
STRING_WIDTH = re.compile(r"(?:.?[<>=^])?\d+s")


def string_widths(source: str) -> list[str]:
    """The offending pieces of ``source``: width specs on string fields, ljust/rjust/center."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
            parts = node.format_spec.values
            spec = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
            if STRING_WIDTH.fullmatch(spec):
                found.append(f"{{{ast.unparse(node.value)}:{spec}}}")
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in (
            "ljust",
            "rjust",
            "center",
        ):
            found.append(ast.unparse(node)[:60])
    return found


@pytest.mark.parametrize("page", notebook_pages())
def test_chapters_pad_text_by_display_width(page):
    notebook = jupytext.read(ROOT / f"{page}.md")
    bad = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            source = "\n".join(l for l in cell.source.splitlines() if l[:1] not in "%!")
            bad += string_widths(source)
    assert not bad, (
        f"{page}: pad text with chipsim.text.pad (a Chinese character is two columns), "
        f"not with a format width: {bad}"
    )


def test_the_check_catches_format_widths_and_ljust():
    assert string_widths('print(f"{label:12s} {n:5d} {x:>9,} {y:.2f}")') == ["{label:12s}"]
    assert string_widths('print(f"{name:>16s}")') == ["{name:>16s}"]
    assert string_widths("print(label.ljust(10))") == ["label.ljust(10)"]
    assert string_widths('print(pad(label, 12), f"{n:8d}")') == []
