"""The built book in a real browser: pages load cleanly, images show, navigation and search work."""

from __future__ import annotations

from urllib.parse import quote, urljoin

import pytest
from chipsim_tests_bookbuild import toc_pages

pytestmark = pytest.mark.book

PAGES = toc_pages()


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="networkidle")


@pytest.mark.parametrize("docname", PAGES)
def test_page_loads_cleanly_and_is_screenshotted(page, base_url, screenshots, docname):
    open_page(page, urljoin(base_url, f"{docname}.html"))
    assert page.title(), f"{docname}: page has no title"
    broken = page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert broken == [], f"{docname}: images that did not load: {broken}"
    page.screenshot(path=str(screenshots / f"{docname.replace('/', '__')}.png"), full_page=True)
    assert page.errors == [], f"{docname}: console errors: {page.errors}"


def test_next_and_previous_walk_the_toc(page, base_url):
    def walk(start: str, selector: str) -> list[str]:
        seen, url = [], urljoin(base_url, f"{start}.html")
        while url and len(seen) <= len(PAGES):
            open_page(page, url)
            seen.append(page.url.removeprefix(base_url).removesuffix(".html"))
            link = page.query_selector(selector)
            url = urljoin(page.url, link.get_attribute("href")) if link else None
        return seen

    assert walk(PAGES[0], "a.right-next") == PAGES
    assert walk(PAGES[-1], "a.left-prev") == PAGES[::-1]
    assert page.errors == []


@pytest.mark.parametrize(
    ("query", "expected_page"),
    [("fusion", "book/static_vs_dynamic"), ("内存规划", "book/glossary")],
)
def test_search_finds_terms(page, base_url, query, expected_page):
    open_page(page, urljoin(base_url, f"search.html?q={quote(query)}"))
    results = page.locator("#search-results ul.search li")
    results.first.wait_for(timeout=15_000)
    links = results.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any(expected_page in href for href in links), f"{query!r} found only {links}"
    assert page.errors == []


def test_chapter_download_menu_offers_the_notebook(page, base_url):
    open_page(page, urljoin(base_url, "book/static_vs_dynamic.html"))
    link = page.locator("a.btn-download-notebook-button")
    assert link.get_attribute("download") == "static_vs_dynamic.ipynb"
    response = page.request.get(urljoin(page.url, link.get_attribute("href")))
    notebook = response.json()
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    assert any(cell["cell_type"] == "code" for cell in notebook["cells"])
