"""The theme's and Sphinx's own words on a 中文 page come from locales/zh_CN/theme.po (issue 26).

Sphinx, pydata-sphinx-theme and sphinx-book-theme ship translations of their own, some missing
and one in Taiwanese usage (列印成 PDF); ``book/_ext/translation.py`` puts theme.po in front of
them (gettext, for the strings the templates translate) and rewrites the labels the templates
write as they are (``title="Toggle primary sidebar"``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import sphinx.locale

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
import translation  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TABLE = translation.theme_catalogue(ROOT, "zh_CN")
SOURCES = {".py", ".html", ".yml", ".pot", ".js"}  # where a tool's own strings are written


def test_the_catalogue_has_the_words_the_issue_names():
    assert TABLE["Print to PDF"] == "打印成 PDF"
    assert TABLE["Search this book..."] == "搜索本书……"
    assert not any("列印" in text for text in TABLE.values())


@pytest.mark.parametrize("english", [k for k in TABLE if "\x04" not in k])
def test_every_entry_is_a_string_the_installed_tools_write(english):
    import jupyter_book
    import pydata_sphinx_theme
    import sphinx_book_theme

    needle = english.encode()
    for package in (sphinx, pydata_sphinx_theme, sphinx_book_theme, jupyter_book):
        folder = Path(package.__file__).parent
        for path in folder.rglob("*"):
            if path.suffix in SOURCES and needle in path.read_bytes():
                return
    pytest.fail(f"theme.po: no installed template or module writes {english!r}")


@pytest.fixture
def translators(monkeypatch):
    """sphinx.locale's translators as a Sphinx build in zh_CN has them (restored after)."""
    import sphinx_book_theme

    monkeypatch.setattr(sphinx.locale, "translators", sphinx.locale.translators.copy())
    sphinx.locale.translators.pop(("general", "sphinx"), None)
    sphinx.locale.translators.pop(("general", "booktheme"), None)
    sphinx.locale.init([], "zh_CN")
    theme = Path(sphinx_book_theme.__file__).parent / "theme" / "sphinx_book_theme"
    sphinx.locale.init([str(theme / "static" / "locales")], "zh_CN", "booktheme")
    return sphinx.locale.translators


def test_templates_and_the_theme_speak_the_catalogue(translators):
    before = sphinx.locale.get_translation("booktheme")("Print to PDF")
    assert before == "列印成 PDF"  # what the theme ships
    app = SimpleNamespace(config=SimpleNamespace(language="zh_CN"), srcdir=str(ROOT))
    translation.theme_speaks_the_language(app)
    assert sphinx.locale.get_translation("sphinx")("Link to this heading") == "链接到本标题"
    assert sphinx.locale.get_translation("booktheme")("Print to PDF") == "打印成 PDF"


def test_labels_a_template_writes_as_they_are_are_translated():
    html = (
        '<button title="Toggle primary sidebar"></button><nav aria-label="Main">'
        '<a title="Main">x</a><p>Toggle primary sidebar</p>'
    )
    out = translation.translate_labels(html, TABLE)
    assert 'title="显示或隐藏左侧目录"' in out
    assert 'aria-label="全书目录"' in out
    assert '<a title="Main">' in out  # a context entry is for its attribute only
    assert "<p>Toggle primary sidebar</p>" in out  # text is gettext's business, not this one's
