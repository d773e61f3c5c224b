"""Session-wide settings and the one headless browser.

Every test runs in the same neutral locale, whatever the machine's (chipsim follows the locale's
language when ``CHIPSIM_LANG`` is unset; tests that check that set it themselves).

The browser: playwright's Python API with Debian's chromium (/usr/bin/chromium); it never
downloads a browser. Playwright's sync API keeps its event loop running in this thread for as
long as it is open, so a second ``sync_playwright()`` in the same session fails ("Sync API inside
the asyncio loop"): every test that needs a browser takes this one fixture. Without chromium
those tests skip with how to install it, except under CI=true, where a missing browser is a
failure.
"""

import os
from pathlib import Path

import pytest

os.environ["LC_ALL"] = "C.UTF-8"
os.environ.pop("LANGUAGE", None)

# The conftest files hold no doctests, and collecting them as doctest modules (--doctest-modules)
# imports each under the one name "conftest": the second one collected would clash.
collect_ignore_glob = ["*/conftest.py", "conftest.py"]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI=true: browser tests must run)")
    pytest.skip(f"{reason}; install it with: sudo apt-get install chromium")


@pytest.fixture(scope="session")
def browser():
    """A headless chromium (Debian's), shared by every test that drives a browser."""
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (it is in requirements.txt)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
