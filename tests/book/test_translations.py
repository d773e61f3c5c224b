"""The translation catalogues are in step with the English, for every page marked complete.

The message templates are regenerated from the current English text (Sphinx's gettext builder,
without executing the notebooks), so an English paragraph that changed after its translation
shows up here as untranslated (new text) until `make translations` marks it fuzzy and a
translator updates it. Pages still being translated are only reported by
`python locales/editions.py check`; `complete:` in locales/editions.yml lists the finished ones.
"""

from __future__ import annotations

import pytest
from chipsim_tests_bookbuild import ROOT, load_catalogues, load_editions, toc_pages

pytestmark = pytest.mark.book

editions = load_editions()
catalogues = load_catalogues()
TRANSLATIONS = editions.translations()


@pytest.fixture(scope="session")
def templates(tmp_path_factory):
    """``<page>.pot`` for every page, cut from the English as it is now."""
    return catalogues.gettext(tmp_path_factory.mktemp("gettext") / "pot")


@pytest.fixture(scope="session")
def status(templates):
    return {e.language: catalogues.status(e.language, templates) for e in TRANSLATIONS}


def complete(edition) -> list[str]:
    return editions.complete_pages(edition, toc_pages())


CASES = [(e.language, page) for e in TRANSLATIONS for page in complete(e)]


def test_there_is_a_translated_edition_with_finished_pages():
    assert TRANSLATIONS and CASES


@pytest.mark.parametrize("edition", TRANSLATIONS, ids=lambda e: e.language)
def test_complete_pages_are_pages_of_the_book(edition):
    assert set(complete(edition)) <= set(toc_pages()), "locales/editions.yml lists unknown pages"


def test_every_page_has_a_template(templates):
    made = {p.relative_to(templates).with_suffix("").as_posix() for p in templates.rglob("*.pot")}
    assert set(toc_pages()) <= made


@pytest.mark.parametrize(("language", "page"), CASES)
def test_complete_page_has_no_untranslated_or_fuzzy_message(status, language, page):
    page_status = status[language][page]
    po = f"locales/{language}/LC_MESSAGES/{page}.po"
    assert page_status.total > 0
    assert page_status.done, (
        f"{po} is listed as complete in locales/editions.yml but is not: run "
        f"`make translations`, then translate the empty and fuzzy entries of {po}:\n"
        + page_status.problems()
    )


@pytest.mark.parametrize("language", [e.language for e in TRANSLATIONS])
def test_toc_captions_are_in_the_root_pages_catalogue(templates, language):
    """The part captions of _toc.yml are messages of the root page (translated with it)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc.get("parts", []) if "caption" in part]
    template = catalogues.load_po(templates / f"{toc['root']}.pot")
    assert captions and all(caption in template for caption in captions)
