"""Build the book's editions and keep their translation catalogues in step with the English.

    python locales/editions.py build [--out DIR] [--jobs N]   every edition of editions.yml
    python locales/editions.py update [PAGE ...]              refresh the catalogues
    python locales/editions.py check                          what is left to translate

``make book`` runs ``build``; ``make translations`` runs ``update``. The translator's workflow is
in ``locales/zh_CN/STYLE.md``.

How an edition is built: Sphinx's own gettext translation, as Jupyter Book 1 exposes it. The
English text is cut into messages (a paragraph, a heading, a table cell, a list item) by the
``gettext`` builder; ``locales/<language>/LC_MESSAGES/<page>.po`` holds their translations; the
edition is the same book built with ``language: <language>``, so every code cell runs again,
once per edition (its figures are labelled in that language through ``chipsim.i18n.tr``) and
is never copied. Runtime text (``tr("...")`` in chipsim and in the chapters' code cells) has
its own catalogue, ``chipsim/locales/<language>/LC_MESSAGES/chipsim.po``, shipped with chipsim.

One repair is made while compiling the catalogues: Sphinx parses a translated paragraph as a
new, separate document, in which myst-nb cannot find the page's glued values (a translated
``{glue:text}`key``` would warn "No key found" and show nothing). So ``{glue}``,
``{glue:any}`` and ``{glue:text}`` roles are compiled as myst-nb's documented cross-page form,
``{glue:text}`page.md::key```, pointing at their own page; myst-nb fills those in after reading
from the values the page's execution saved. The ``.po`` files keep the plain form.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
RUNTIME_LOCALES = ROOT / "chipsim" / "locales"
STRICT = ["--all", "-W", "-n", "--keep-going"]
PO_WIDTH = 76

# Where runtime messages come from: tr("...") / N_("...") calls in these files, plus tables of
# labels that are translated where they are shown (tr(TABLE[key])).
RUNTIME_SOURCES = ("chipsim/**/*.py", "book/**/*.md")
RUNTIME_TABLES = ("chipsim.hw.isa:UNIT_TITLES",)
TR_NAMES = {"tr", "N_"}

GLUE_ROLE = re.compile(r"\{glue(?P<kind>:text|:any)?\}`(?P<target>[^`]+)`")
ANY_GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")
XREF = re.compile(r"\{(?:doc|ref|numref|eq|download)\}`(?:[^`<]*<)?([^`>]+)>?`")
FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")


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


def merge(base: dict, extra: dict) -> dict:
    """``base`` updated by ``extra``, dictionaries merged key by key (a new dictionary)."""
    result = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def book_config(overrides: dict[str, Any], root: Path = ROOT) -> dict[str, Any]:
    """``_config.yml`` with ``overrides`` merged in, for a config file written outside the root.

    Jupyter Book resolves ``local_extensions`` against the config file's folder, so they are
    made absolute here.
    """
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config = merge(config, overrides)
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {
        name: str((root / path).resolve())
        for name, path in (sphinx.get("local_extensions") or {}).items()
    }
    return config


def write_config(config: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Generated by locales/editions.py from _config.yml; do not edit.\n"
        + yaml.safe_dump(config, allow_unicode=True, sort_keys=False),
        encoding="utf-8",
    )
    return path


def _page_source(page: str, root: Path) -> str:
    """The file name of a page (``book/choosing`` -> ``choosing.md``), for ``file::key``."""
    for suffix in (".md", ".ipynb"):
        if (root / f"{page}{suffix}").is_file():
            return Path(f"{page}{suffix}").name
    return Path(f"{page}.md").name


def glue_here(text: str, page: str, root: Path = ROOT) -> str:
    """Point the glue roles of a translated paragraph at their own page (module docstring)."""
    source = _page_source(page, root)

    def repl(match: re.Match[str]) -> str:
        target = match["target"]
        if "::" in target:
            return match[0]
        if match["kind"] == ":text" and ":" not in target:
            target += ":s"  # myst-nb reads "page.md::key" as key "page.md:" with format "key"
        return match[0].replace(f"`{match['target']}`", f"`{source}::{target}`")

    return GLUE_ROLE.sub(repl, text)


def compile_catalogues(language: str, dest: Path, root: Path = ROOT) -> Path:
    """Compile ``locales/<language>/**/*.po`` into ``dest/<language>/LC_MESSAGES/**/*.mo``.

    Fuzzy (outdated) entries are left out, so the page shows the current English there.
    """
    source = root / "locales" / language / "LC_MESSAGES"
    shutil.rmtree(dest / language, ignore_errors=True)
    for po in sorted(source.rglob("*.po")):
        page = po.relative_to(source).with_suffix("").as_posix()
        with po.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id and isinstance(message.string, str) and message.string:
                message.string = glue_here(message.string, page, root)
        mo = dest / language / "LC_MESSAGES" / f"{page}.mo"
        mo.parent.mkdir(parents=True, exist_ok=True)
        with mo.open("wb") as f:
            write_mo(f, catalog, use_fuzzy=False)
    return dest


# ---------------------------------------------------------------------------------- building


def _jupyter_book() -> str:
    return str(Path(sys.executable).with_name("jupyter-book"))


def _env() -> dict[str, str]:
    bindir = str(Path(sys.executable).parent)
    return dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


def build_command(edition: Edition, out: Path, root: Path = ROOT) -> list[str]:
    """The ``jupyter-book build`` command of one edition; writes its config and catalogues."""
    if edition.source:
        return [_jupyter_book(), "build", str(root), "--path-output", str(out), *STRICT]
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
        _jupyter_book(),
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
            command, cwd=root, env=_env(), stdout=stdout, stderr=subprocess.STDOUT if log else None
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


# ------------------------------------------------------------------------------- catalogues


def gettext(out: Path, root: Path = ROOT) -> Path:
    """Cut the English book into message templates (``<out>/<page>.pot``) and return ``out``.

    The notebooks are not executed: messages come from the text, never from cell outputs.
    Sphinx works in ``<out>.build`` (a fresh environment each time, apart from the HTML's).
    """
    work = out.with_name(out.name + ".build")
    base = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    suppressed = list(base.get("sphinx", {}).get("config", {}).get("suppress_warnings", []))
    config = book_config(
        {
            "execute": {"execute_notebooks": "off"},
            "sphinx": {
                "config": {
                    "gettext_compact": False,  # one catalogue per page
                    "gettext_location": False,  # no line numbers: quiet diffs
                    "gettext_uuid": False,
                    # unexecuted notebooks have no glued values
                    "suppress_warnings": [*suppressed, "mystnb.glue"],
                }
            },
        },
        root,
    )
    path = write_config(config, work / "_config.gettext.yml")
    shutil.rmtree(work / "_build", ignore_errors=True)
    command = [_jupyter_book(), "build", str(root), "--config", str(path), "--all"]
    command += ["--path-output", str(work), "--builder", "custom", "--custom-builder", "gettext"]
    proc = subprocess.run(command, cwd=root, env=_env(), capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"the gettext build failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    built = work / "_build" / "gettext"
    if out != built:
        shutil.rmtree(out, ignore_errors=True)
        shutil.move(str(built), str(out))
    return out


def _load(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f)


def _save(catalog: Catalog, path: Path) -> bool:
    """Write ``catalog`` to ``path`` if its text changed; True if it did."""
    from io import BytesIO

    buffer = BytesIO()
    write_po(
        buffer,
        catalog,
        width=PO_WIDTH,
        include_previous=True,  # a fuzzy entry shows the English it was translated from
        ignore_obsolete=True,
        include_lineno=False,  # file names only: moving code does not touch the catalogue
    )
    data = buffer.getvalue()
    if path.is_file() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def _pop_previous_id(message: Any) -> str:
    """Remove the ``#| msgid`` lines (babel reads them as comments) and return their text."""
    lines = [c for c in message.user_comments if c.startswith("|")]
    message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    parts = re.findall(
        r'"((?:[^"\\]|\\.)*)"', " ".join(c for c in lines if "msgid_plural" not in c)
    )
    return unescape_po("".join(parts))


def unescape_po(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), text)


def _updated(template: Catalog, po: Path, language: str, *, runtime: bool = False) -> Catalog:
    """The catalogue at ``po`` brought in step with ``template`` (or a new one).

    Changed English keeps its old translation, marked fuzzy, with the old English beside it
    (``#| msgid``), so the translator sees what changed. Dates in the header only move when
    a message did.
    """
    if po.is_file():
        catalog = _load(po)
        before = [(m.id, m.string, m.fuzzy) for m in catalog if m.id]
        previous = {m.id: _pop_previous_id(m) for m in catalog if m.id}
        catalog.update(template, update_creation_date=False)
        for message in catalog:
            if not message.id:
                continue
            _pop_previous_id(message)
            if not message.fuzzy:
                continue
            # the English the translation was made from, even if it changed twice since
            source = message.previous_id[0] if message.previous_id else message.id
            if previous.get(source):
                message.previous_id = [previous[source]]
        if [(m.id, m.string, m.fuzzy) for m in catalog if m.id] != before:
            catalog.creation_date = template.creation_date
        return _brace_flags(catalog, runtime)
    catalog = copy.deepcopy(template)
    catalog.locale = language
    catalog.project, catalog.version = "chipsim course", "1"
    catalog.language_team = catalog.last_translator = "chipsim course translators"
    catalog.msgid_bugs_address = ""
    catalog.header_comment = (
        f"# {catalog.locale_identifier} translation of the chipsim course; see "
        f"locales/{language}/STYLE.md.\n# Refresh with `make translations`; never edit msgid."
    )
    return _brace_flags(catalog, runtime)


def _brace_flags(catalog: Catalog, runtime: bool) -> Catalog:
    """Babel flags text with braces as python-brace-format; only runtime strings are (tr())."""
    if not runtime:
        for message in catalog:
            message.flags.discard("python-brace-format")
    return catalog


def runtime_messages() -> Catalog:
    """Every string given to ``tr``/``N_`` as a literal in chipsim or a chapter's code cells."""
    catalog = Catalog(project="chipsim", version="1", fuzzy=False)
    for pattern in RUNTIME_SOURCES:
        for path in sorted(ROOT.glob(pattern)):
            rel = path.relative_to(ROOT).as_posix()
            for text, line in _tr_calls(path):
                catalog.add(text, locations=[(rel, line)])
    for spec in RUNTIME_TABLES:
        module, _, name = spec.partition(":")
        for text in getattr(importlib.import_module(module), name).values():
            catalog.add(text, locations=[(module.replace(".", "/") + ".py", 0)])
    return catalog


def _tr_calls(path: Path) -> list[tuple[str, int]]:
    if path.suffix == ".md":
        import jupytext

        text = path.read_text(encoding="utf-8")
        if not (text.startswith("---") and "kernelspec:" in text.split("---", 2)[1]):
            return []  # a Markdown page, not a notebook: no code runs
        notebook = jupytext.reads(text, fmt="md:myst")
        cells = [c.source for c in notebook.cells if c.cell_type == "code"]
        # IPython magics and shell escapes are not Python
        sources = [
            "\n".join(line for line in s.splitlines() if line[:1] not in "%!") for s in cells
        ]
    else:
        sources = [path.read_text(encoding="utf-8")]
    found = []
    for source in sources:
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            first = node.args[0]
            if (
                name in TR_NAMES
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                found.append((first.value, node.lineno))
    return found


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
                if _save(_updated(_load(pot_dir / f"{page}.pot"), po, edition.language), po):
                    written.append(str(po.relative_to(ROOT)))
        for po in sorted(catalogues.rglob("*.po")):
            if po.relative_to(catalogues).with_suffix("").as_posix() not in known:
                print(f"note: {po.relative_to(ROOT)} belongs to no page any more; delete it")
        po = RUNTIME_LOCALES / edition.language / "LC_MESSAGES" / "chipsim.po"
        if _save(_updated(runtime, po, edition.language, runtime=True), po):
            written.append(str(po.relative_to(ROOT)))
    return written


# ------------------------------------------------------------------------------------ checks


@dataclass
class CatalogueStatus:
    """How far one catalogue is from its English template."""

    name: str
    total: int = 0
    untranslated: list[str] = field(default_factory=list)
    fuzzy: list[str] = field(default_factory=list)
    markup: list[str] = field(default_factory=list)
    missing: bool = False

    @property
    def done(self) -> bool:
        return not (self.missing or self.untranslated or self.fuzzy or self.markup)

    @property
    def translated(self) -> int:
        return self.total - len(self.untranslated) - len(self.fuzzy)

    def problems(self) -> str:
        lines = []
        if self.missing:
            lines.append(f"{self.name}: no catalogue (run `make translations PAGES={self.name}`)")
        for kind, messages in (("untranslated", self.untranslated), ("fuzzy", self.fuzzy)):
            for msgid in messages:
                lines.append(f"{self.name}: {kind}: {_short(msgid)}")
        lines += [f"{self.name}: {problem}" for problem in self.markup]
        return "\n".join(lines)


def _short(text: str, width: int = 90) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def markup_problems(msgid: str, msgstr: str, *, runtime: bool = False) -> list[str]:
    """What a translation lost or broke: glued values, cross-references, ``{fields}``."""
    problems = []
    if runtime:
        if sorted(FIELD.findall(msgid)) != sorted(FIELD.findall(msgstr)):
            problems.append(f"fields differ from the English in {_short(msgstr)}")
        return problems
    if sorted(ANY_GLUE.findall(msgid)) != sorted(ANY_GLUE.findall(msgstr)):
        problems.append(f"glued values differ from the English in {_short(msgstr)}")
    if msgstr != msgid and "{glue:md}" in msgstr:
        problems.append(
            f"{{glue:md}} cannot be translated around (myst-nb has no cross-page form for "
            f"it): keep the whole message as the English, or glue translated Markdown "
            f"(tr()) in the cell: {_short(msgstr)}"
        )
    if sorted(XREF.findall(msgid)) != sorted(XREF.findall(msgstr)):
        problems.append(f"cross-references differ from the English in {_short(msgstr)}")
    return problems


def catalogue_status(template: Catalog, po: Path, name: str, *, runtime: bool = False):
    """Compare the catalogue at ``po`` with its ``template``."""
    status = CatalogueStatus(name=name, total=sum(1 for m in template if m.id))
    if not po.is_file():
        status.missing = True
        status.untranslated = [m.id for m in template if m.id]
        return status
    catalog = _load(po)
    for message in template:
        if not message.id:
            continue
        entry = catalog.get(message.id)
        if entry is None or not entry.string:
            status.untranslated.append(message.id)
        elif entry.fuzzy:
            status.fuzzy.append(message.id)
        else:
            status.markup += markup_problems(message.id, entry.string, runtime=runtime)
    return status


def status(language: str, pot_dir: Path, root: Path = ROOT) -> dict[str, CatalogueStatus]:
    """Per page (and ``chipsim`` for the runtime strings): how complete ``language`` is."""
    catalogues = root / "locales" / language / "LC_MESSAGES"
    result = {}
    for pot in sorted(pot_dir.rglob("*.pot")):
        page = pot.relative_to(pot_dir).with_suffix("").as_posix()
        result[page] = catalogue_status(_load(pot), catalogues / f"{page}.po", page)
    if root == ROOT:
        po = RUNTIME_LOCALES / language / "LC_MESSAGES" / "chipsim.po"
        result["chipsim"] = catalogue_status(runtime_messages(), po, "chipsim", runtime=True)
    return result


def complete_pages(edition: Edition, pages: list[str]) -> list[str]:
    """The pages ``edition`` promises to have translated (``complete:`` in editions.yml)."""
    return list(pages) if edition.complete == "all" else list(edition.complete)


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
