"""Small fixes to the HTML pages: no console errors, offline; wide outputs fit at 1280 px.

Jupyter Book 1 registers sphinx-thebe's configuration script twice, so every page declared
``const THEBE_JS_URL`` twice and the browser raised "Identifier has already been declared".
This extension drops duplicate ``<script>`` entries (same file, same inline body) per page.

It also adds ``book/_static/layout.css``: between 1200 and 1500 px the page's contents become
the drawer narrower screens use, so code and printed tables get the text's full width, and
printed output wraps instead of being cut off (tests/browser/test_layout.py checks every page).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx


def _script_key(script: Any) -> tuple[str, tuple[tuple[str, str], ...]]:
    attributes = getattr(script, "attributes", {}) or {}
    # An inline script's filename is None when added, "" once restored from the saved
    # environment: the two copies differ only there.
    return str(getattr(script, "filename", script) or ""), tuple(
        sorted((k, str(v)) for k, v in attributes.items())
    )


def drop_duplicate_scripts(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context`` hook: keep the first of identical script entries.

    Runs early (priority 100): the event stops at the first handler that returns a template
    name, so late handlers may never run.
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


STATIC = Path(__file__).resolve().parents[1] / "_static"  # book/_static


def add_static(app: Sphinx, config: Any) -> None:
    """``config-inited``: the book's own static files (``layout.css``) go to ``_static``."""
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", add_static)
    app.add_css_file("layout.css", priority=900)
    app.connect("html-page-context", drop_duplicate_scripts, priority=100)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
