"""The translated editions, built from the same cells as the English one (locales/editions.yml)."""

from __future__ import annotations

import json
import re

import pytest
from chipsim_tests_bookbuild import ROOT, load_catalogues, load_editions, notebook_pages, toc_pages

pytestmark = pytest.mark.book

editions = load_editions()
catalogues = load_catalogues()
TRANSLATIONS = editions.translations()
EDITIONS = [(e.language, e.path) for e in TRANSLATIONS]
COMPLETE = [
    (e.language, e.path, page)
    for e in TRANSLATIONS
    for page in editions.complete_pages(e, toc_pages())
]
GLUED = re.compile(r'<span class="pasted-text">([^<]*)</span>')
CODE = re.compile(r'<div class="cell_input docutils container">\s*(.*?)</div>\s*</div>', re.S)
IMAGE = re.compile(r'<img [^>]*src="([^"]+)"')
NUMBER = re.compile(r"\d[\d,.]*")


#: Pages that time the machine building the book (the reader's own CPU): each edition measures
#: it afresh, so those numbers differ between editions; only their count must agree. (4.10
#: also glues XLA's kernel counts, which do not vary; its timings do.)
MEASURES_THIS_MACHINE = {"book/accuracy", "book/xla"}


def glued_numbers(page_html: str) -> list[str]:
    """The numbers glued into a page, in sorted order: a glued *word* (faster, the same) is
    translated, and a translation may put the glued values of a sentence in another order."""
    return sorted(n for value in GLUED.findall(page_html) for n in NUMBER.findall(value))


def output_kinds(cell) -> list[str]:
    """A code cell's outputs by kind, with a stream's chunks as one: how a kernel splits a
    cell's printing into stream outputs depends on timing, not on the cell."""
    kinds = [o.output_type + ":" + o.get("name", "") for o in cell.outputs]
    return [k for n, k in enumerate(kinds) if n == 0 or k != kinds[n - 1] or "stream" not in k]


def html(book, path: str, page: str) -> str:
    return (book.html / path / f"{page}.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("language", "path"), EDITIONS)
@pytest.mark.parametrize("page", toc_pages())
def test_every_page_exists_in_every_edition(book, language, path, page):
    assert (book.html / path / f"{page}.html").is_file(), f"{language}: no {path}/{page}.html"


@pytest.mark.parametrize(("language", "path"), EDITIONS)
def test_edition_declares_its_language(book, language, path):
    page = html(book, path, toc_pages()[0])
    assert f'<html lang="{language.replace("_", "-")}"' in page


@pytest.mark.parametrize(("language", "path", "page"), COMPLETE)
def test_complete_page_is_translated_entirely(book, language, path, page):
    """No 'not translated yet' notice: every message of the page found its translation."""
    assert "translation-notice" not in html(book, path, page)


@pytest.mark.parametrize(("language", "path"), EDITIONS)
def test_unfinished_page_says_so(book, language, path):
    edition = next(e for e in TRANSLATIONS if e.language == language)
    unfinished = [p for p in toc_pages() if p not in editions.complete_pages(edition, toc_pages())]
    if not unfinished:
        pytest.skip("every page is translated")
    assert "translation-notice" in html(book, path, unfinished[0])


@pytest.mark.parametrize(("language", "path"), EDITIONS)
@pytest.mark.parametrize("page", notebook_pages())
def test_same_cells_same_numbers_in_every_edition(book, language, path, page):
    """One copy of every code cell: the edition ran the English cells and glued the same
    numbers (glued words follow the page's language)."""
    english, translated = html(book, "", page), html(book, path, page)
    assert CODE.findall(translated) == CODE.findall(english)
    if page in MEASURES_THIS_MACHINE:
        assert len(glued_numbers(translated)) == len(glued_numbers(english))
    else:
        assert glued_numbers(translated) == glued_numbers(english)
    assert len(IMAGE.findall(translated)) == len(IMAGE.findall(english))


@pytest.mark.parametrize(("language", "path"), EDITIONS)
def test_translated_paragraph_shows_the_glued_number(book, language, path):
    """4.1 glues the compiled speed-up into a sentence that the edition translates."""
    assert (language, path, "book/static_vs_dynamic") in COMPLETE
    english = html(book, "", "book/static_vs_dynamic")
    translated = html(book, path, "book/static_vs_dynamic")
    # the speed-up is glued as words in the page's language (chipsim.ratios.faster)
    words = re.search(r'runs\s*<span class="pasted-text">([^<]+)</span>\s*—', english)
    assert words, "the English sentence with the glued speed-up is gone"
    number = re.search(r"\d+(?:\.\d+)?", words[1])
    assert number and float(number[0]) > 1, words[1]
    glued = re.findall(r'<span class="pasted-text">([^<]+)</span>', translated)
    assert [g for g in glued if number[0] in g and g != words[1]], "the edition's own words"


@pytest.mark.parametrize(("language", "path"), EDITIONS)
def test_figures_follow_the_language(book, language, path):
    """The graph figure of 4.1 carries a translated title: its picture differs from the English."""
    english = IMAGE.findall(html(book, "", "book/static_vs_dynamic"))
    translated = IMAGE.findall(html(book, path, "book/static_vs_dynamic"))
    assert english and len(english) == len(translated)
    assert english[0] != translated[0]  # images are named after a hash of their bytes


def test_toc_captions_and_sphinx_words_are_chinese(book):
    page = html(book, "zh", "book/static_vs_dynamic")
    from chipsim.i18n import read_po

    caption = re.search(r'caption: "(.+)"', (ROOT / "_toc.yml").read_text()).group(1)
    chinese = read_po(ROOT / "locales/zh_CN/LC_MESSAGES/book/intro.po")[caption]
    assert chinese.startswith("计算图与芯片映射（4.1–")  # the caption the toc has, translated
    assert f'caption-text">{chinese}' in page
    assert "搜索" in page  # Sphinx and the theme speak Chinese too
    assert "AI 芯片上的计算图" in page  # the edition's title (editions.yml config)


@pytest.mark.parametrize(("language", "path"), EDITIONS)
def test_search_index_has_glossary_words_whole(book, language, path):
    """jieba cuts Chinese into words; glossary terms are taught to it as whole words."""
    text = (book.html / path / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    for word in ("内存规划", "算子融合", "张量核心", "静态图"):
        assert word in index["terms"], f"{language} search index lacks {word!r}"


def test_switch_offers_only_the_other_editions_and_chinese_hints(book):
    english, chinese = html(book, "", "book/intro"), html(book, "zh", "book/intro")
    assert "btn-language-zh-CN" in english and "btn-language-en" not in english
    assert "btn-language-en" in chinese and "btn-language-zh-CN" not in chinese
    assert "toggleHintShow = '点击展开'" in html(book, "zh", "book/static_vs_dynamic")


def test_language_switch_links_every_page_both_ways(book):
    for page in toc_pages():
        english = html(book, "", page)
        chinese = html(book, "zh", page)
        up = "../" * page.count("/")
        assert f'href="{up}zh/{page}.html"' in english, f"{page}: no switch to 中文"
        assert f'href="{up}../{page}.html"' in chinese, f"{page}: no switch to English"


DOWNLOADS = [case for case in COMPLETE if case[2] in notebook_pages()]


@pytest.mark.parametrize(("language", "path", "page"), DOWNLOADS)
def test_downloaded_chapter_is_the_editions_notebook(book, language, path, page):
    """The ⬇ .ipynb of a translated page: its text translated, the same code cells and their
    outputs, and a first cell that sets chipsim's language (re-runs draw translated figures)."""
    import nbformat

    chapter = nbformat.read(book.html / path / "_sources" / f"{page}.ipynb", as_version=4)
    english = nbformat.read(book.html / "_sources" / f"{page}.ipynb", as_version=4)
    nbformat.validate(chapter)
    first, *cells = chapter.cells
    assert first.cell_type == "code" and f'set_language("{language}")' in first.source

    def code(notebook_cells):
        return [(c.source, output_kinds(c)) for c in notebook_cells if c.cell_type == "code"]

    assert code(cells) == code(english.cells)
    markdown = " ".join(" ".join(c.source.split()) for c in cells if c.cell_type == "markdown")
    catalogue = catalogues.load_po(ROOT / "locales" / language / "LC_MESSAGES" / f"{page}.po")
    for message in catalogue:
        if message.id and message.string and message.string != message.id:
            # roles ({glue:text}, {term}, ...) are written out in the download: check the
            # translated text around them
            for piece in re.split(r"\{[\w:.-]+\}`[^`]*`", message.string):
                piece = " ".join(piece.split()).strip(" *（）()“”")
                if len(piece) >= 4:
                    assert piece in markdown, message.string
            if len(message.id.split()) >= 3:  # a one-word cell ("static") may be in a label
                assert " ".join(message.id.split()) not in markdown, message.id
