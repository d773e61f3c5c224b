"""Build the book's editions and keep their translation catalogues in step with the English.

    python locales/editions.py build [--out DIR] [--jobs N] [--only LANG]   every edition
    python locales/editions.py update [PAGE ...]                             refresh catalogues
    python locales/editions.py check [--strict]                              what is left to do

``make book`` runs ``build``; ``make translations`` runs ``update``. The translator's workflow is
in ``locales/zh_CN/STYLE.md``; the editions are listed in ``locales/editions.yml``.

An edition is Sphinx's own gettext translation, as Jupyter Book 1 exposes it: the same book
built with ``language: <language>`` and the page catalogues of ``catalogues.py``, so every code
cell runs again, once per edition (its figures are labelled in that language through
``chipsim.i18n.tr``), and is never copied. English goes to ``_build/html``, the others to
``_build/html/<path>``; the editions build side by side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from catalogues import (
    ROOT,
    RUNTIME_LOCALES,
    book_config,
    compile_catalogues,
    gettext,
    jupyter_book,
    load_po,
    merge,
    python_env,
    runtime_messages,
    save_po,
    status,
    updated,
    write_config,
)

LOCALES = ROOT / "locales"
STRICT = ["--all", "-W", "-n", "--keep-going"]


@dataclass(frozen=True)
class Edition:
    """One language of the book (an entry of ``locales/editions.yml``)."""

    language: str
    name: str
    path: str
    config: dict[str, Any] = field(default_factory=dict)
    complete: tuple[str, ...] | str = ()
    untranslated_notice: str = ""

    @property
    def source(self) -> bool:
        """The English edition is the source the others are translated from."""
        return self.path == ""


def editions(root: Path = ROOT) -> list[Edition]:
    """The editions of ``locales/editions.yml``, the source (English) first.

    ``root`` is the book's folder everywhere in this module (the tests build a small book).
    """
    data = yaml.safe_load((root / "locales" / "editions.yml").read_text(encoding="utf-8"))
    result = []
    for entry in data["editions"]:
        complete = entry.get("complete", ())
        result.append(
            Edition(
                language=entry["language"],
                name=entry["name"],
                path=str(entry.get("path", "")).strip("/"),
                config=entry.get("config", {}) or {},
                complete=complete if complete == "all" else tuple(complete),
                untranslated_notice=entry.get("untranslated_notice", ""),
            )
        )
    if not result or not result[0].source:
        raise ValueError("locales/editions.yml: the first edition must be the source (path: '')")
    return result


def translations(root: Path = ROOT) -> list[Edition]:
    """Every edition but the source."""
    return [e for e in editions(root) if not e.source]


def complete_pages(edition: Edition, pages: list[str]) -> list[str]:
    """The pages ``edition`` promises to have translated (``complete:`` in editions.yml)."""
    return list(pages) if edition.complete == "all" else list(edition.complete)


def build_command(edition: Edition, out: Path, root: Path = ROOT) -> list[str]:
    """The ``jupyter-book build`` command of one edition; writes its config and catalogues."""
    if edition.source:
        return [jupyter_book(), "build", str(root), "--path-output", str(out), *STRICT]
    work = out / "_build" / "editions" / edition.language
    locale_dir = compile_catalogues(edition.language, work / "locales", root)
    overrides = merge(
        edition.config,
        {
            "sphinx": {
                "config": {
                    "language": edition.language,
                    "locale_dirs": [str(locale_dir)],
                    "gettext_compact": False,  # one catalogue per page
                    "gettext_auto_build": False,  # compiled above, outside the sources
                }
            }
        },
    )
    config = write_config(book_config(overrides, root), work / "_config.yml")
    return [
        jupyter_book(),
        *("build", str(root), "--config", str(config), "--path-output", str(work), *STRICT),
    ]


def _place(edition: Edition, out: Path) -> None:
    """Move a translated edition's HTML to ``out/_build/html/<path>``."""
    built = out / "_build" / "editions" / edition.language / "_build" / "html"
    target = out / "_build" / "html" / edition.path
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(built), str(target))


def build(
    out: Path = ROOT, jobs: int = 1, selected: list[str] | None = None, root: Path = ROOT
) -> int:
    """Build the editions strictly; English in ``out/_build/html``, the others below it.

    With ``jobs > 1`` the editions build side by side (logs in ``_build/editions/*.log``).
    Returns 0 when every edition built without a warning.
    """
    chosen = [e for e in editions(root) if not selected or e.language in selected]
    logs = out / "_build" / "editions"
    logs.mkdir(parents=True, exist_ok=True)
    failed: list[str] = []
    started = time.monotonic()
    running: list[tuple[Edition, subprocess.Popen, float, Path | None]] = []

    def finish(edition: Edition, proc: subprocess.Popen, t0: float, log: Path | None) -> None:
        rc = proc.wait()
        if log is not None:
            text = log.read_text(encoding="utf-8", errors="replace")
            sys.stdout.write(text if rc else "\n".join(text.splitlines()[-3:]) + "\n")
        if rc == 0 and not edition.source:
            _place(edition, out)
        print(
            f"[editions] {edition.language}: rc={rc} in {time.monotonic() - t0:.0f} s", flush=True
        )
        if rc:
            failed.append(edition.language)

    for edition in chosen:
        command = build_command(edition, out, root)
        log = logs / f"{edition.language}.log" if jobs > 1 else None
        where = f", log: {log.relative_to(out)}" if log else ""
        print(f"[editions] building {edition.language} ({edition.name}){where}", flush=True)
        stdout = log.open("w", encoding="utf-8") if log else None
        proc = subprocess.Popen(
            command,
            cwd=root,
            env=python_env(),
            stdout=stdout,
            stderr=subprocess.STDOUT if log else None,
        )
        running.append((edition, proc, time.monotonic(), log))
        if len(running) >= max(jobs, 1):
            finish(*running.pop(0))
    while running:
        finish(*running.pop(0))
    print(f"[editions] all editions: {time.monotonic() - started:.0f} s", flush=True)
    if failed:
        print(f"[editions] FAILED: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def update(new_pages: list[str] | None = None, pot_dir: Path | None = None) -> list[str]:
    """Refresh every existing catalogue from the sources; start ``new_pages``' catalogues.

    Returns the catalogues it wrote.
    """
    pot_dir = gettext(pot_dir or ROOT / "_build" / "gettext")
    known = {p.relative_to(pot_dir).with_suffix("").as_posix() for p in pot_dir.rglob("*.pot")}
    unknown = sorted(set(new_pages or ()) - known)
    if unknown:
        raise SystemExit(f"not a page of the book: {', '.join(unknown)} (pages: {sorted(known)})")
    written: list[str] = []
    runtime = runtime_messages()
    for edition in translations():
        catalogues = LOCALES / edition.language / "LC_MESSAGES"
        for page in sorted(known):
            po = catalogues / f"{page}.po"
            if po.is_file() or page in (new_pages or ()):
                if save_po(updated(load_po(pot_dir / f"{page}.pot"), po, edition.language), po):
                    written.append(str(po.relative_to(ROOT)))
        for po in sorted(catalogues.rglob("*.po")):
            if po.relative_to(catalogues).with_suffix("").as_posix() not in known:
                print(f"note: {po.relative_to(ROOT)} belongs to no page any more; delete it")
        po = RUNTIME_LOCALES / edition.language / "LC_MESSAGES" / "chipsim.po"
        if save_po(updated(runtime, po, edition.language, runtime=True), po):
            written.append(str(po.relative_to(ROOT)))
    return written


def check(pot_dir: Path | None = None, *, fresh: bool = True) -> int:
    """Print each edition's progress; 1 if a page listed as complete has a problem."""
    pot_dir = pot_dir or ROOT / "_build" / "gettext"
    if fresh:
        pot_dir = gettext(pot_dir)
    bad = 0
    for edition in translations():
        pages = status(edition.language, pot_dir)
        promised = set(complete_pages(edition, [p for p in pages if p != "chipsim"]))
        print(f"{edition.language} ({edition.name})")
        for name, page in pages.items():
            mark = "complete" if name in promised or name == "chipsim" else "in progress"
            print(
                f"  {name:28} {page.translated:4}/{page.total:<4} fuzzy {len(page.fuzzy):3}"
                f"  {mark}{'' if page.done or mark != 'complete' else '  <- PROBLEMS'}"
            )
            if mark == "complete" and not page.done:
                bad = 1
                print("    " + page.problems().replace("\n", "\n    "))
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="locales/editions.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_build = sub.add_parser("build", help="build every edition strictly")
    p_build.add_argument("--out", type=Path, default=ROOT, help="HTML goes to OUT/_build/html")
    p_build.add_argument(
        "--jobs",
        type=int,
        default=min(len(editions()), os.cpu_count() or 1),
        help="editions built side by side, each logging to _build/editions/<language>.log "
        "(default: one per core; 1 shows the build's output as it runs)",
    )
    p_build.add_argument("--only", nargs="*", help="only these languages (e.g. zh_CN)")
    p_update = sub.add_parser("update", help="refresh the catalogues from the English")
    p_update.add_argument("pages", nargs="*", help="also start catalogues for these pages")
    p_check = sub.add_parser("check", help="print what is left to translate")
    p_check.add_argument("--strict", action="store_true", help="exit 1 if a complete page is not")
    args = parser.parse_args(argv)
    if args.command == "build":
        return build(args.out.resolve(), args.jobs, args.only)
    if args.command == "update":
        for path in update(args.pages):
            print(f"updated {path}")
        check(fresh=False)  # the templates update() just made
        return 0
    return check() if args.strict else (check() and 0)


if __name__ == "__main__":
    sys.exit(main())
