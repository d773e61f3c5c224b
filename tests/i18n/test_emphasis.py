"""Bold and italic survive translation: a Chinese ``**时间：**评分时`` shows its asterisks.

CommonMark closes ``**`` only where it is *right-flanking*: after punctuation it must be
followed by a space or punctuation, and Chinese puts neither between a full-width colon and
the next word. So ``**时间：**评分时`` renders as literal asterisks in Jupyter, on the feedback
page and in the book (MyST is CommonMark); ``**时间**：评分时`` is bold. A learner found it in
the released notebooks. These tests render what learners read with markdown-it (the parser
under MyST; JupyterLab's marked and nbconvert's mistune agree on these cases) and look for
asterisks left over outside code.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from chipsim.i18n import read_po

ROOT = Path(__file__).resolve().parents[2]
COMMONMARK = MarkdownIt("commonmark")
BOOK_CATALOGUES = sorted((ROOT / "locales").glob("*/LC_MESSAGES/book/**/*.po"))
NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb"))


def stray_asterisks(markdown: str) -> list[str]:
    """The rendered text's runs of asterisks outside code: emphasis that did not close.

    Example:
        >>> stray_asterisks("**时间：**评分时"), stray_asterisks("**时间**：评分时")
        (['**时间：**评分时'], [])
        >>> stray_asterisks("`a ** b` and 2 * 3 * 4")  # code, and a lone multiplication
        []
    """
    html = COMMONMARK.render(markdown)
    html = re.sub(r"<(code|pre)>.*?</\1>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", "", html)
    return [line.strip() for line in text.splitlines() if re.search(r"\*\*|\*\S[^*]*\S\*", line)]


@pytest.mark.parametrize("path", BOOK_CATALOGUES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_translation_keeps_the_emphasis_of_its_english(path):
    """Every message whose English renders without stray asterisks renders so translated
    (reST from docstrings, as in the API reference, is skipped with its English)."""
    broken = [
        (english[:60], stray)
        for english, translated in read_po(path).items()
        if not stray_asterisks(english) and (stray := stray_asterisks(translated))
    ]
    assert not broken, f"{path.name}: put the closing ** before the full-width mark: {broken}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_a_notebooks_markdown_has_no_stray_asterisks(path):
    """The notebooks' Markdown cells, both languages (the released ones are the same text:
    ``tests/i18n`` checks the release against the solutions)."""
    nb = nbformat.read(path, as_version=4)
    broken = [
        (i, stray)
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown" and (stray := stray_asterisks(cell.source))
    ]
    assert not broken, f"{path.name}: put the closing ** before the full-width mark: {broken}"
