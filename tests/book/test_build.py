"""The strict book build: it succeeds, every toc page has HTML, no cell failed or warned,
every notebook chapter is downloadable as .ipynb, and the search index knows Chinese terms."""

from __future__ import annotations

import json
import re

import jupytext
import nbformat
import pytest
from chipsim_tests_bookbuild import ROOT, notebook_pages, toc_pages

pytestmark = pytest.mark.book

# myst-nb renders stderr and errors in their own output blocks.
BAD_OUTPUT_CLASSES = ("output traceback", "output stderr", "output error")
BAD_OUTPUT_TEXT = ("Traceback (most recent call last)", "Warning:", "WARNING")
CELL_OUTPUT = re.compile(r'<div class="cell_output docutils container">(.*?)</div>\s*</div>', re.S)


def page_html(book, page: str) -> str:
    return (book.html / f"{page}.html").read_text(encoding="utf-8")


def test_strict_build_succeeds(book):
    tail = "\n".join(book.log.splitlines()[-40:])
    assert book.returncode == 0, f"jupyter-book build failed; last lines of its log:\n{tail}"
    assert "build finished with problems" not in book.log, tail


@pytest.mark.parametrize("page", toc_pages())
def test_every_toc_page_has_html(book, page):
    assert (book.html / f"{page}.html").is_file(), f"{page}.md is in _toc.yml but has no HTML"


@pytest.mark.parametrize("page", notebook_pages())
def test_cell_outputs_are_clean(book, page):
    html = page_html(book, page)
    for cls in BAD_OUTPUT_CLASSES:
        assert f'class="{cls}' not in html, f"{page}: a cell produced '{cls}' output"
    for block in CELL_OUTPUT.findall(html):
        for text in BAD_OUTPUT_TEXT:
            assert text not in block, f"{page}: a cell output contains {text!r}:\n{block[:500]}"


# A Markdown table that did not render shows its pipes and its |---| rule as text (smart
# quotes turn the dashes into em dashes).
RAW_TABLE_RULE = re.compile(r"\|\s*:?(-{3,}|\u2014+)\s*:?\|")


@pytest.mark.parametrize("page", notebook_pages())
def test_tables_a_cell_writes_render_as_tables(book, page):
    text = re.sub(r"<pre.*?</pre>", "", page_html(book, page), flags=re.S)  # code is left as typed
    raw = RAW_TABLE_RULE.search(re.sub(r"<[^>]+>", "", text))
    assert raw is None, f"{page}: a Markdown table shows as text ({raw.group(0)!r}), not a table"


@pytest.mark.parametrize("page", notebook_pages())
def test_chapter_downloads_as_runnable_notebook(book, page):
    target = book.html / "_sources" / f"{page}.ipynb"
    assert target.is_file(), f"{page}: no {target.name} in _sources"
    nb = nbformat.read(target, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    source = jupytext.read(ROOT / f"{page}.md")
    n_code = sum(c.cell_type == "code" for c in source.cells)
    assert sum(c.cell_type == "code" for c in nb.cells) == n_code
    # the theme's download menu links to it
    assert f'_sources/{page}.ipynb"' in page_html(book, page)
    # it reads as the page does: no MyST left for a plain Jupyter to show raw
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code_free = re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M))
    raw = re.findall(r"\{[\w:.-]+\}`|^\s*:{3,}\{|^\s*\([\w:.-]+\)=\s*$", code_free, re.M)
    assert not raw, f"{page}: raw MyST in the downloaded notebook: {raw[:5]}"


@pytest.mark.parametrize("path", ["", "zh"])
def test_downloaded_chapter_carries_the_glued_values(book, path):
    """4.1's 'the add writes N bytes': N is in the notebook's text, as on the page."""
    import numpy as np

    import chipsim as cs

    nb = nbformat.read(book.html / path / "_sources" / "book/static_vs_dynamic.ipynb", 4)
    graph = cs.trace(lambda x: (x + 1) * 2, np.zeros(4, np.float32))  # the page's example
    nbytes = next(n for n in graph.nodes if n.op == "add").output.type.nbytes
    markdown = " ".join(" ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    wording = "写出 {} 个字节" if path else "writes {} bytes"
    assert wording.format(nbytes) in markdown
    assert "<details><summary>" in markdown  # the self-check answers fold as on the page


def test_search_index_has_english_and_chinese_terms(book):
    text = (book.html / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    for term in ("fusion", "内存规划", "算子融合", "静态图"):
        assert term in index["terms"], f"search index lacks {term!r}"


@pytest.mark.ch4_1
def test_static_vs_dynamic_shows_two_eager_kernels_and_the_graph(book):
    html = page_html(book, "book/static_vs_dynamic")
    assert "kernel 1: add_kernel" in html and "kernel 2: mul_kernel" in html
    assert "%2 = add(%0, %1) : f32[4]" in html
    assert "Python control flow on a traced tensor" in html  # the TraceError a learner sees
    assert html.count("<img ") >= 1  # the drawn graph
