"""Every page of both editions fits a 1280 px wide window, and Chinese needs no system font.

At 1280 px the text column was about 690 px wide, and wide outputs (4.5's placement table, the
kernel reports, long error messages) were cut off at its edge: readable only by scrolling each
box sideways. Here Chromium opens every page of the book in each edition and measures, with the
browser's own layout, that no code or output box, table, picture or line of text is wider than
the room it has, and that the page itself does not scroll sideways.

The last test starts Chromium with a fontconfig that knows only DejaVu (a machine with no CJK
font; with no font at all Chromium loads no web font either) and checks which font draws the
Chinese of a page's heading and first paragraph: the one the book ships (book/_ext/cjk_font.py).
"""

from __future__ import annotations

import pytest
from chipsim_tests_bookbuild import toc_pages

pytestmark = pytest.mark.book

EDITIONS = {"en": "", "zh_CN": "zh/"}
PAGES = [(lang, page) for lang in EDITIONS for page in toc_pages()]

#: what overflows: (selector, kind) measured by OVERFLOW_JS
OVERFLOW_JS = """() => {
  const article = document.querySelector('article.bd-article');
  const room = article.getBoundingClientRect();
  const right = room.right - parseFloat(getComputedStyle(article).paddingRight) + 1;
  const found = [];
  const show = (el) => (el.innerText || el.getAttribute('src') || '').trim().slice(0, 70);
  for (const el of article.querySelectorAll('pre')) {
    if (el.scrollWidth > el.clientWidth + 1)
      found.push(['box cut off', el.scrollWidth, el.clientWidth, show(el)]);
  }
  for (const el of article.querySelectorAll('table, img, svg, .cell_output, .admonition')) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > right)
      found.push([el.tagName.toLowerCase() + ' past the text', Math.round(box.right),
                  Math.round(right), show(el)]);
  }
  for (const el of article.querySelectorAll('.pst-scrollable-table-container')) {
    if (el.scrollWidth > el.clientWidth + 1)
      found.push(['table scrolls', el.scrollWidth, el.clientWidth, show(el)]);
  }
  for (const el of article.querySelectorAll('p, li, h1, h2, h3, dt, dd, th, td, summary')) {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
      found.push(['text overflows', el.scrollWidth, el.clientWidth, show(el)]);
  }
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth + 1)
    found.push(['page scrolls sideways', page.scrollWidth, window.innerWidth, '']);
  return found;
}"""


@pytest.mark.parametrize(("language", "docname"), PAGES)
def test_nothing_overflows_at_1280_px(page, base_url, language, docname):
    url = f"{base_url}{EDITIONS[language]}{docname}.html"
    page.goto(url, wait_until="load")
    page.wait_for_timeout(300)  # fonts and late layout
    found = page.evaluate(OVERFLOW_JS)
    assert not found, f"{url}: " + "\n".join(map(str, found[:8]))
    assert page.viewport_size["width"] == 1280


def test_the_page_contents_stay_reachable_at_1280_px(page, base_url):
    """The page's contents left the margin for the header's "On this page" drawer."""
    page.goto(f"{base_url}book/mapping_flow.html", wait_until="load")
    toggle = page.locator(".bd-header button.secondary-toggle")
    assert toggle.is_visible()
    toggle.click()
    drawer = page.locator("#pst-secondary-sidebar-modal")
    drawer.get_by_text("A real block: GPT-2 small").wait_for(timeout=10_000)


def test_chinese_draws_with_the_shipped_font_when_the_system_has_none(
    fontless_browser, fonts_used, base_url
):
    """A second Chromium, whose fontconfig knows DejaVu only."""
    tab = fontless_browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(f"{base_url}zh/book/intro.html", wait_until="load")
    used = fonts_used(tab, ("article h1", "article section p"))
    for selector, families in used.items():  # the hanzi come from the book's own font
        assert families.get("Chipsim CJK Sans", 0) > 0, (selector, used)
        assert not {"Noto Sans CJK SC", "Source Han Sans SC"} & set(families), used
