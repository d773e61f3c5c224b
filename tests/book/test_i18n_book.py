"""Every construct a translated edition must handle, on a tiny book (tests/book/i18n_book/).

The course's own pages do not use all of them yet (captioned and numbered figures, a glued
figure), so this book does, and is built with the same code as the course (locales/editions.py):
English, a complete Chinese edition, and a zh_TW edition whose catalogue holds a translation
Sphinx cannot use -- that build must fail and say why.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from chipsim_tests_bookbuild import load_catalogues, load_editions

pytestmark = pytest.mark.book

editions = load_editions()
catalogues = load_catalogues()
BOOK = Path(__file__).with_name("i18n_book")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("i18n-book")
    returncode = editions.build(out=out, jobs=3, root=BOOK)
    logs = {
        e.language: (out / "_build" / "editions" / f"{e.language}.log")
        for e in editions.editions(BOOK)
    }
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    text = {k: ansi.sub("", v.read_text(encoding="utf-8")) for k, v in logs.items()}
    return out / "_build" / "html", returncode, text


def page(built, path: str, name: str) -> str:
    html, _, _ = built
    return (html / path / f"{name}.html").read_text(encoding="utf-8")


def test_the_english_and_chinese_editions_build_strictly(built):
    html, _, logs = built
    for language in ("en", "zh_CN"):
        assert "build succeeded" in logs[language], logs[language][-3000:]
        assert ": WARNING:" not in logs[language], logs[language][-3000:]
    assert (html / "index.html").is_file() and (html / "zh" / "index.html").is_file()


def test_a_translation_sphinx_cannot_use_fails_the_build_and_says_why(built):
    _, returncode, logs = built
    assert returncode == 1  # zh_TW failed
    assert "translation not used" in logs["zh_TW"]
    assert "1. 一個帶編號的問題" in logs["zh_TW"] and "1\\. " in logs["zh_TW"]


def test_glued_number_in_translated_paragraph(built):
    assert '答案是 <span class="pasted-text">42</span>，由一个' in page(built, "zh", "index")
    assert 'The answer is <span class="pasted-text">42</span>' in page(built, "", "index")


def test_term_role_with_translated_title_links_the_glossary(built):
    assert re.search(r'href="#term-kernel"><span class="xref std std-term">内核函数</span>',
                     page(built, "zh", "index"))  # fmt: skip


def test_figure_captions_and_numbered_references(built):
    first, second = page(built, "zh", "index"), page(built, "zh", "second")
    assert "一张带标题的粘贴图。" in first  # {glue:figure} caption
    assert "一张带标题的图。" in second  # {figure} caption
    assert re.search(r"见<a [^>]*>.*?图 1.*?</a>和<a [^>]*>.*?图 2", second, re.S)


def test_admonitions_dropdown_titles_tables_glossary_and_toc_caption(built):
    zh = page(built, "zh", "index")
    for text in ("学习目标", "提示框里的一段话。", "1. 一个带编号的问题？", "问题的答案。"):
        assert text in zh, text
    for text in ("<p>术语</p>", "<p>含义</p>", "<p>单元格一</p>", "<p>单元格二</p>"):
        assert text in zh, text
    assert "设备每次启动的工作单位。" in zh
    assert 'caption-text">第一部分' in page(built, "zh", "second")
    assert "translation-notice" not in zh + page(built, "zh", "second")


def test_glued_figure_is_drawn_again_in_the_edition_language(built):
    english = re.findall(r'<img [^>]*src="([^"]+)"', page(built, "", "index"))
    chinese = re.findall(r'<img [^>]*src="([^"]+)"', page(built, "zh", "index"))
    assert len(english) == len(chinese) == 1 and english != chinese


def test_catalogues_of_the_tiny_book_are_complete(tmp_path):
    """The gettext templates of the tiny book, including the glued figure's caption, which the
    unexecuted gettext build keeps through book/_ext/translation.py."""
    templates = catalogues.gettext(tmp_path / "pot", BOOK)
    assert "A glued figure with a caption." in catalogues.load_po(templates / "index.pot")
    status = catalogues.status("zh_CN", templates, BOOK)
    assert set(status) == {"index", "second"}
    assert all(s.done for s in status.values()), "\n".join(s.problems() for s in status.values())
