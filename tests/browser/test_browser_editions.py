"""The translated editions in a real browser: clean pages, the language switch, Chinese search."""

from __future__ import annotations

from urllib.parse import quote, urljoin

import pytest
from chipsim_tests_bookbuild import load_editions, toc_pages

pytestmark = pytest.mark.book

PAGES = toc_pages()
editions = load_editions()
SOURCE = editions.editions()[0]
TRANSLATIONS = editions.translations()


def tag(edition) -> str:
    return edition.language.replace("_", "-")


def url_of(base_url: str, edition, docname: str) -> str:
    prefix = f"{edition.path}/" if edition.path else ""
    return urljoin(base_url, f"{prefix}{docname}.html")


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="networkidle")


@pytest.mark.parametrize("edition", TRANSLATIONS, ids=tag)
@pytest.mark.parametrize("docname", PAGES)
def test_translated_page_loads_cleanly_and_is_screenshotted(
    page, base_url, screenshots, edition, docname
):
    open_page(page, url_of(base_url, edition, docname))
    assert page.title(), f"{edition.language}/{docname}: page has no title"
    assert page.get_attribute("html", "lang") == tag(edition)
    broken = page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert broken == [], f"{edition.language}/{docname}: images that did not load: {broken}"
    name = f"{edition.path}__{docname.replace('/', '__')}.png"
    page.screenshot(path=str(screenshots / name), full_page=True)
    assert page.errors == [], f"{edition.language}/{docname}: console errors: {page.errors}"


def switch(page, to) -> None:
    """Click the header's language switch to edition ``to`` and wait for the new page."""
    link = page.locator(f"a.btn-language-{tag(to)}")
    assert link.count() == 1, f"no switch to {to.name} on {page.url}"
    assert link.get_attribute("target") is None  # same tab
    with page.expect_navigation(wait_until="networkidle"):
        link.click()


@pytest.mark.parametrize("edition", TRANSLATIONS, ids=tag)
@pytest.mark.parametrize("docname", PAGES)
def test_language_switch_round_trips_on_every_page(page, base_url, edition, docname):
    open_page(page, url_of(base_url, SOURCE, docname))
    switch(page, edition)
    assert page.url == url_of(base_url, edition, docname)
    assert page.get_attribute("html", "lang") == tag(edition)
    switch(page, SOURCE)
    assert page.url == url_of(base_url, SOURCE, docname)
    assert page.get_attribute("html", "lang") == tag(SOURCE)
    assert page.errors == []


@pytest.mark.parametrize("edition", TRANSLATIONS, ids=tag)
def test_switch_keeps_the_section(page, base_url, edition):
    """Section anchors come from the English titles, so they are the same in every edition."""
    open_page(page, url_of(base_url, SOURCE, "book/static_vs_dynamic") + "#python-control-flow")
    switch(page, edition)
    assert page.url.endswith("book/static_vs_dynamic.html#python-control-flow")
    heading = page.locator("#python-control-flow + h2")  # the label, then its heading
    assert heading.is_visible()
    assert heading.inner_text() != "Python control flow cannot be traced"  # translated


CHINESE_SEARCHES = [
    ("内存规划", "book/glossary"),
    ("算子融合", "book/static_vs_dynamic"),
    ("张量核心", "book/glossary"),
]


@pytest.mark.parametrize(("query", "expected_page"), CHINESE_SEARCHES)
def test_chinese_search_finds_words(page, base_url, query, expected_page):
    zh = next(e for e in TRANSLATIONS if e.language.startswith("zh"))
    open_page(page, url_of(base_url, zh, "search") + f"?q={quote(query)}")
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=15_000)
    links = results.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any(expected_page in href for href in links), f"{query!r} found only {links}"
    assert page.errors == []
