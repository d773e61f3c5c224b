"""Translate the Markdown cells of a chapter notebook with the page's catalogue.

A translated edition offers each chapter as a notebook in its language: the executed notebook
(same code cells, outputs of this edition's run), its Markdown cells translated message by
message with the same catalogue Sphinx used for the page, and a first code cell that sets
chipsim's language, so re-running it draws the figures in that language too.

Messages are the blocks Sphinx's gettext builder cuts the text into: paragraphs, headings,
list items, table cells, directive titles (``:::{admonition} Title``) and, recursively, the
content of directives. Each is found with the same Markdown parser MyST uses; a block whose
text is not in the catalogue (or whose source cannot be located exactly) stays English.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

Lookup = Callable[[str], "str | None"]
_OPTION = re.compile(r"\s*:[\w-]+:")  # a directive option line, e.g. ``:class: note``


@cache
def _parser() -> Any:
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    config = MdParserConfig(enable_extensions={"colon_fence", "deflist", "dollarmath"})
    return create_md_parser(config, RendererHTML)


def _key(text: str) -> str:
    """A block's message id, as Sphinx makes it from the block's source."""
    return text.replace("\n", " ").strip()


def translate_markdown(source: str, lookup: Lookup) -> str:
    """``source`` with every block that ``lookup`` translates replaced by its translation."""
    tokens = _parser().parse(source)
    lines = source.splitlines(keepends=True)
    edits: dict[int, tuple[int, list[str]]] = {}  # first line -> (end line, new lines)
    by_line: dict[int, list[str]] = {}  # blocks that share one line: table cells
    for token in tokens:
        if token.type == "inline" and token.map:
            start, end = token.map
            if end - start == 1:
                by_line.setdefault(start, []).append(token.content)
            elif new := _paragraph(lines[start], token.content, lookup):
                edits[start] = (end, new)
        elif token.type in ("colon_fence", "fence") and token.info.startswith("{") and token.map:
            start, end = token.map
            if end - start >= 2 and lines[end - 1].strip().startswith(token.markup[:3]):
                edits[start] = (end, _directive(lines[start:end], token.info, lookup))
    for start, contents in by_line.items():
        line = lines[start]
        if len(contents) == 1:
            if new := _paragraph(line, contents[0], lookup):
                edits[start] = (start + 1, new)
        else:  # table row: replace each cell in turn
            cursor = 0
            for content in contents:
                found = line.find(content, cursor)
                translated = lookup(_key(content))
                if found < 0:
                    break
                if translated:
                    line = line[:found] + translated + line[found + len(content) :]
                    cursor = found + len(translated)
                else:
                    cursor = found + len(content)
            edits[start] = (start + 1, [line])
    for start in sorted(edits, reverse=True):
        end, new = edits[start]
        lines[start:end] = new
    return "".join(lines)


def _paragraph(first_line: str, content: str, lookup: Lookup) -> list[str] | None:
    """One block, all its lines, as one line: its first line's prefix (``- ``, ``# ``) kept.

    None when there is no translation or the block's text is not where the parser says.
    """
    translated = lookup(_key(content))
    head = content.split("\n", 1)[0]
    at = first_line.find(head)
    if not translated or at < 0:
        return None
    ending = "\n" if first_line.endswith("\n") else ""
    return [first_line[:at] + translated + ending]


def _directive(lines: list[str], info: str, lookup: Lookup) -> list[str]:
    """A ``:::{name} title`` block: its title and (recursively) its body."""
    title = info.split("}", 1)[1].strip() if "}" in info else ""
    first = lines[0]
    translated_title = lookup(_key(title)) if title else None
    if translated_title and title in first:
        first = first.replace(title, translated_title, 1)
    inner = lines[1:-1]
    options = 0  # ``:class: note`` lines open the body: they are not text (Sphinx drops them)
    while options < len(inner) and _OPTION.match(inner[options]):
        options += 1
    body = translate_markdown("".join(inner[options:]), lookup)
    return [first, *inner[:options], body, lines[-1]]


def translate_notebook(path: Path, lookup: Lookup, setup: str, language: str | None = None) -> None:
    """Rewrite the notebook at ``path``: Markdown translated, ``setup`` as a first code cell,
    and ``language`` recorded in its metadata (``chipsim.i18n`` reads it, so a cell run
    before the first one still speaks the edition's language)."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    if language:
        notebook.metadata.setdefault("chipsim", {})["language"] = language
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, lookup)
    first = nbformat.v4.new_code_cell(setup, metadata={"tags": ["chipsim-language"]})
    notebook.cells.insert(0, first)
    nbformat.write(notebook, path)
