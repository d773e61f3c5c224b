"""``make chapter CH=book/<page>.md``: one chapter, rendered exactly as in the book.

The whole book is built with the book's own configuration (so glossary terms, cross
references, admonitions and glued numbers render as they do in ``make book``), but only the
chosen chapter's cells run: the other pages are excluded from execution, which makes the
build take seconds instead of the book's minutes. Warnings about the *other* pages' glued
numbers (never computed here) are expected; the chapter's own warnings are listed at the end.

    python book/_ext/chapter.py book/static_vs_dynamic.md [--out _build/chapter]
    python book/_ext/chapter.py book/static_vs_dynamic.md --edition zh_CN   # the 中文 page

``--edition`` renders the chapter as that edition of the book does (its catalogues, its
settings, the cells run in its language); the HTML goes to ``<out>-<language>``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "locales"))
from catalogues import (  # noqa: E402
    book_config,
    compile_catalogues,
    jupyter_book,
    merge,
    python_env,
    write_config,
)


def toc_files(root: Path = ROOT) -> list[str]:
    """The pages of ``_toc.yml`` (docnames such as ``book/intro``)."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]

    def walk(entries: list) -> None:
        for entry in entries:
            if "file" in entry:
                pages.append(entry["file"])
            for key in ("sections", "chapters"):
                walk(entry.get(key, []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    walk(toc.get("chapters", []))
    return [re.sub(r"\.(md|ipynb)$", "", p) for p in pages]


def chapter_config(page: str, out: Path, root: Path = ROOT, language: str | None = None) -> Path:
    """The book's config (``language``'s edition of it), executing ``page`` only; written
    under ``out``."""
    others = [f"{p}.md" for p in toc_files(root) if p != page]
    overrides: dict = {"execute": {"exclude_patterns": others}}
    if language is not None:
        from editions import editions

        found = [e for e in editions(root) if e.language == language and not e.source]
        if not found:
            raise SystemExit(f"error: no translated edition {language!r} in locales/editions.yml")
        locale_dir = compile_catalogues(language, out / "locales", root)
        sphinx = {
            "language": language,
            "locale_dirs": [str(locale_dir)],
            "gettext_compact": False,
            "gettext_auto_build": False,
        }
        overrides = merge(merge(found[0].config, {"sphinx": {"config": sphinx}}), overrides)
    return write_config(book_config(overrides, root), out / "_config.yml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", help="the chapter's file, e.g. book/static_vs_dynamic.md")
    parser.add_argument("--out", default="_build/chapter", help="output folder")
    parser.add_argument("--edition", help="a translated edition's language, e.g. zh_CN")
    args = parser.parse_args(argv)
    path = (ROOT / args.chapter).resolve()
    page = path.relative_to(ROOT).as_posix().removesuffix(".md")
    if page not in toc_files():
        known = ", ".join(f"{p}.md" for p in toc_files())
        print(f"error: {args.chapter} is not a page of _toc.yml; one of: {known}", file=sys.stderr)
        return 2
    out = (ROOT / (f"{args.out}-{args.edition}" if args.edition else args.out)).resolve()
    config = chapter_config(page, out, language=args.edition)
    cmd = [jupyter_book(), "build", str(ROOT), "--all", "--config", str(config)]
    cmd += ["--path-output", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=python_env())
    log = proc.stdout + proc.stderr
    (out / "build.log").write_text(log, encoding="utf-8")
    mine = [line for line in log.splitlines() if f"{page}.md" in line and "WARNING" in line]
    if proc.returncode != 0:
        print(log[-4000:], file=sys.stderr)
        print(f"error: the build failed (full log: {out / 'build.log'})", file=sys.stderr)
        return 1
    for line in mine:
        print(re.sub(r"\x1b\[[0-9;]*m", "", line))
    html = out / "_build" / "html" / f"{page}.html"
    shown = html.relative_to(ROOT) if html.is_relative_to(ROOT) else html
    print(f"{len(mine)} warning(s) in {page}.md. Open {shown}")
    book = f"make book EDITIONS={args.edition}" if args.edition else "make book"
    print(f"(only this chapter ran: the other pages there have no outputs; `{book}` runs all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
