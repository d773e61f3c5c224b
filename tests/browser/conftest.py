"""Fixtures for the browser tests: the built book served on 127.0.0.1, driven by chromium.

The headless chromium itself is the session's ``browser`` fixture (tests/conftest.py), shared
with the learner-journey test.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import sys
import threading
from pathlib import Path

import pytest

SCREENSHOTS = Path(__file__).resolve().parents[2] / "_build" / "screenshots"


def load_bookbuild():
    """Import tests/book/bookbuild.py under the name tests/book/conftest.py uses too."""
    name = "chipsim_tests_bookbuild"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "book" / "bookbuild.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


bookbuild = load_bookbuild()


@pytest.fixture(scope="session")
def book(tmp_path_factory):
    """The strict build of the whole book (the same one tests/book uses)."""
    build = bookbuild.build_book(tmp_path_factory.getbasetemp() / "book-build")
    if not (build.html / "index.html").is_file():
        pytest.fail(f"the book did not build; log tail:\n{build.log[-3000:]}")
    return build


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # keep pytest output readable
        pass


@pytest.fixture(scope="session")
def base_url(book):
    """http://127.0.0.1:<free port>/ serving the built HTML."""
    handler = functools.partial(_QuietHandler, directory=str(book.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture
def fontless_browser(browser, tmp_path):
    """A second Chromium whose fontconfig knows DejaVu only (no CJK font: a learner's machine
    without one)."""
    dejavu = Path("/usr/share/fonts/truetype/dejavu")
    if not dejavu.is_dir():
        pytest.skip("Debian's fonts-dejavu-core (a dependency of chromium) is not installed")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        f'<?xml version="1.0"?>\n<fontconfig><dir>{dejavu}</dir>'
        f"<cachedir>{tmp_path / 'cache'}</cachedir></fontconfig>\n",
        encoding="utf-8",
    )
    env = {"FONTCONFIG_FILE": str(conf), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    args = ["--no-sandbox", "--disable-gpu", "--no-first-run"]
    chromium = "/usr/bin/chromium"  # the session's browser runs it (tests/conftest.py)
    blind = browser.browser_type.launch(executable_path=chromium, args=args, env=env)
    yield blind
    blind.close()


@pytest.fixture
def fonts_used():
    """``fonts_used(tab, selectors)``: ``{selector: {font family: glyphs drawn with it}}`` for
    the first node of each selector (what Chromium's DevTools say it drew them with)."""
    return _fonts_used


def _fonts_used(tab, selectors) -> dict[str, dict[str, int]]:
    tab.evaluate("document.fonts.ready.then(() => true)")
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    used = {}
    for selector in selectors:
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
        used[selector] = {f["familyName"]: f["glyphCount"] for f in fonts["fonts"]}
    return used


@pytest.fixture
def page(browser):
    """A fresh tab that records console errors and uncaught exceptions in ``page.errors``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.errors = []
    tab.on("console", lambda msg: tab.errors.append(msg.text) if msg.type == "error" else None)
    tab.on("pageerror", lambda exc: tab.errors.append(f"uncaught: {exc}"))
    yield tab
    context.close()


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
