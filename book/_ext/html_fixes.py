"""Small fixes to the HTML pages so they load without console errors, offline.

Jupyter Book 1 registers sphinx-thebe's configuration script twice, so every page declared
``const THEBE_JS_URL`` twice and the browser raised "Identifier has already been declared".
This extension drops duplicate ``<script>`` entries (same file, same inline body) per page.
"""

from __future__ import annotations

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


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", drop_duplicate_scripts, priority=100)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
