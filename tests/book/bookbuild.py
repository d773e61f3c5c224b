"""Build the book (every edition) once per pytest session; shared by tests/book and tests/browser.

Both folders' conftest files load this module under one name (see ``load``), so the strict
build runs once even when both test folders are collected. Set ``BOOK_HTML=_build/html`` to
test an existing build instead (handy while working on the browser tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True, slots=True)
class BookBuild:
    """Where a build put its HTML, how it ended and what it printed."""

    html: Path
    returncode: int
    log: str


def toc_pages(toc_file: Path = ROOT / "_toc.yml") -> list[str]:
    """Every page of ``_toc.yml`` in reading order, as docnames like ``book/intro``."""
    toc = yaml.safe_load(toc_file.read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(entries: list[dict]) -> None:
        for entry in entries:
            if "file" in entry:
                pages.append(entry["file"])
            for key in ("sections", "chapters"):
                walk(entry.get(key, []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    walk(toc.get("chapters", []))
    return [p.removesuffix(".md").removesuffix(".ipynb") for p in pages]


def notebook_pages() -> list[str]:
    """The toc pages that are notebooks (their front matter names a kernelspec)."""
    result = []
    for page in toc_pages():
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        if text.startswith("---") and "kernelspec:" in text.split("---", 2)[1]:
            result.append(page)
    return result


def load_editions():
    """``locales/editions.py`` (the book's editions) as the module ``editions``."""
    import importlib

    locales = str(ROOT / "locales")
    if locales not in sys.path:
        sys.path.insert(0, locales)  # editions.py imports catalogues.py beside it
    return importlib.import_module("editions")


def load_catalogues():
    """``locales/catalogues.py`` (gettext templates, catalogue checks) as ``catalogues``."""
    import importlib

    load_editions()
    return importlib.import_module("catalogues")


_BUILDS: dict[str, BookBuild] = {}


def build_book(out_dir: Path) -> BookBuild:
    """Build the book strictly under ``out_dir`` (once per session) and return the result."""
    if "book" in _BUILDS:
        return _BUILDS["book"]
    existing = os.environ.get("BOOK_HTML")
    if existing:
        build = BookBuild(html=(ROOT / existing).resolve(), returncode=0, log="(reused build)")
    else:
        # every edition (English, 中文, ...) strictly, as `make book` does (locales/editions.py)
        env = dict(
            os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        )
        proc = subprocess.run(
            [sys.executable, str(ROOT / "locales" / "editions.py"), "build", "--out", str(out_dir)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        build = BookBuild(
            html=out_dir / "_build" / "html",
            returncode=proc.returncode,
            log=proc.stdout + proc.stderr,
        )
    _BUILDS["book"] = build
    return build
