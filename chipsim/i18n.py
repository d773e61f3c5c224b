"""Text that code shows a learner while it runs, in the learner's language.

The book's prose is translated by Sphinx from ``locales/``. Text that *code* makes at run time
-- figure titles and axis labels, and later the grader's score lines and reasons -- goes through
:func:`tr`, which looks it up in the gettext catalogue
``chipsim/locales/<language>/LC_MESSAGES/chipsim.po`` (``make translations`` extracts every
``tr("...")`` of chipsim and of the chapters' code cells into it).

The language is the first of: the innermost :func:`use_language` block, the last
:func:`set_language` call, the ``CHIPSIM_LANG`` environment variable (each edition of the book
sets it for the kernels that run its chapters), the language the running notebook names in its
metadata (``"chipsim": {"language": "zh_CN"}``: a chapter downloaded from the 中文 edition does;
Jupyter tells its kernels their notebook in ``JPY_SESSION_NAME``), the locale (``LC_ALL``,
``LC_MESSAGES``, ``LANG``, ``LANGUAGE``) when it names a language chipsim speaks, English. So a
learner whose system speaks Chinese, or who opened a Chinese notebook, gets Chinese figures and
feedback without a call. A message with no translation, or whose translation is outdated
(marked fuzzy), stays English.

Example:
    >>> from chipsim.i18n import tr, use_language
    >>> tr("schedule step")
    'schedule step'
    >>> with use_language("zh_CN"):
    ...     tr("schedule step")
    '调度步'
    >>> tr("{n} nodes", n=3)  # fields are filled in after translation
    '3 nodes'
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import re
import string
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chipsim.text import BREAK, text_width, wrap

ENGLISH = "en"
ENV_VAR = "CHIPSIM_LANG"
#: The notebook a Jupyter kernel runs: jupyter_server sets it for every kernel it starts.
NOTEBOOK_VAR = "JPY_SESSION_NAME"
LOCALES = Path(__file__).with_name("locales")

_scoped: contextvars.ContextVar[str | None] = contextvars.ContextVar("chipsim_lang", default=None)
_chosen: str | None = None  # set_language(); a module global, so it outlives a notebook cell
_fonts_ready = False
#: What runs once, at the first translated string after matplotlib was imported: viz registers
#: the shipped Chinese font here (:func:`on_matplotlib`), so this bottom layer imports no viz.
_MATPLOTLIB_HOOKS: list[Callable[[], None]] = []


def languages() -> tuple[str, ...]:
    """The languages chipsim speaks: English and every catalogue under ``chipsim/locales``."""
    found = sorted(p.parent.parent.name for p in LOCALES.glob("*/LC_MESSAGES/chipsim.po"))
    return (ENGLISH, *found)


def normalize(language: str, *, source: str = "language") -> str:
    """``"zh"``, ``"zh-CN"``, ``"zh_Hans"`` -> ``"zh_CN"``; ``"en_US"`` -> ``"en"``.

    Raises:
        ValueError: for a language chipsim has no catalogue for (the message names ``source``).
    """
    tag = language.strip().replace("-", "_").lower()
    if tag == "" or tag in ("c", "posix") or tag.startswith("en"):
        return ENGLISH
    known = languages()
    for code in known:
        if tag == code.lower():
            return code
    # "zh", "zh_hans", "zh_hans_cn": the first catalogue of that language (zh -> zh_CN)
    base = tag.split("_")[0]
    for code in known:
        if code.lower().split("_")[0] == base:
            return code
    raise ValueError(
        f"chipsim has no translation for {source} {language!r}; "
        f"it speaks {', '.join(known)} (set {ENV_VAR} or call set_language with one of them)"
    )


#: The locale variables, in the order the C library reads them for messages.
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")


def current_language() -> str:
    """The language :func:`tr` translates into now (see the module docstring for the order)."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    if _chosen is not None:
        return _chosen
    env = os.environ.get(ENV_VAR)
    if env:
        return normalize(env, source=f"${ENV_VAR}")
    return notebook_language() or locale_language()


def notebook_language(environ: dict[str, str] | None = None) -> str | None:
    """The language the running notebook names in its metadata, or None.

    ``metadata["chipsim"]["language"]`` of the ``.ipynb`` in ``$JPY_SESSION_NAME``; anything
    that is not a language chipsim speaks (or no notebook, or an unreadable one) is None.
    """
    env = os.environ if environ is None else environ
    path = env.get(NOTEBOOK_VAR, "")
    if not path.endswith(".ipynb"):
        return None
    if not os.path.isabs(path) and not os.path.exists(path):
        # an older server names it relative to its root; the kernel runs in its folder
        path = os.path.basename(path)
    try:
        changed = os.stat(path).st_mtime_ns
    except OSError:
        return None
    return _declared_language(os.path.abspath(path), changed)


@functools.lru_cache(maxsize=16)
def _declared_language(path: str, changed: int) -> str | None:
    """The notebook's declared language (cached until the file changes: ``changed``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        chosen = data["metadata"]["chipsim"]["language"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return spoken(chosen)


def spoken(chosen: Any) -> str | None:
    """``chosen`` as a language chipsim speaks (``"zh"`` -> ``"zh_CN"``), or None: what a
    file or an answer names is its writer's data, so anything else is ignored, never an error.

    Example:
        >>> spoken("zh"), spoken("klingon"), spoken(42)
        ('zh_CN', None, None)
    """
    try:
        return normalize(chosen) if isinstance(chosen, str) and len(chosen) <= 32 else None
    except ValueError:
        return None


def locale_language(environ: dict[str, str] | None = None) -> str:
    """The language the locale names, if chipsim speaks it; English otherwise.

    Example:
        >>> locale_language({"LANG": "zh_CN.UTF-8"}), locale_language({"LANG": "de_DE.UTF-8"})
        ('zh_CN', 'en')
        >>> locale_language({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"})  # LC_ALL decides
        'en'
    """
    env = os.environ if environ is None else environ
    value = next((env[v] for v in LOCALE_VARS if env.get(v)), "")
    tag = value.split(":")[0].split(".")[0].split("@")[0]
    try:
        return normalize(tag)
    except ValueError:
        return ENGLISH


def set_language(language: str | None) -> None:
    """Translate into ``language`` from now on.

    ``None`` goes back to the default: ``$CHIPSIM_LANG``, else the language the running
    notebook names, else the locale's, else English (see the module's docstring).
    """
    global _chosen
    _chosen = None if language is None else normalize(language)
    if _chosen not in (None, ENGLISH):
        _prepare_matplotlib()


@contextmanager
def use_language(language: str) -> Iterator[str]:
    """Translate into ``language`` inside the block (per thread and asyncio task)."""
    token = _scoped.set(normalize(language))
    if _scoped.get() != ENGLISH:
        _prepare_matplotlib()
    try:
        yield _scoped.get()
    finally:
        _scoped.reset(token)


def tr(message: str, /, **fields: Any) -> str:
    """``message`` in the current language, with ``{name}`` fields filled in from ``fields``.

    Write ``message`` in English with named fields (``"{cycles:,} cycles"``), never with
    numbers or names pasted in, so that one catalogue entry serves every value and a translator
    can move the fields. Without ``fields`` the text is returned as it is (braces and all).
    """
    return _translated(message, fields).replace(BREAK, "")


def tr_lines(message: str, width: int, /, **fields: Any) -> list[str]:
    """:func:`tr` in lines of at most ``width`` columns, cut where its translator marked that
    a line may break (:data:`~chipsim.text.BREAK`, see :func:`~chipsim.text.wrap`): for a
    label in a box of a figure.

    Example:
        >>> with use_language("zh_CN"):
        ...     tr_lines("partition the ops into kernels (operator fusion)", 14)
        ['把算子划分为', '内核函数', '（算子融合）']
    """
    return wrap(_translated(message, fields), width)


def _translated(message: str, fields: dict[str, Any]) -> str:
    """``message`` in the current language, fields filled in, break marks kept."""
    language = current_language()
    text = message
    if language != ENGLISH:
        text = catalogue(language).get(message) or message
        _prepare_matplotlib()
    return _WIDE.format(text, **fields) if fields else text


def listing(items: Iterable[Any]) -> str:
    """``items`` as one list in the current language: Chinese separates the items of a list
    with its enumeration comma (、); its comma (``tr(", ")``, ，) joins clauses.

    Example:
        >>> listing(["load", "contract", "store"])
        'load, contract, store'
        >>> with use_language("zh_CN"):
        ...     listing(["load", "contract", "store"])
        'load、contract、store'
    """
    text = ""
    for i, item in enumerate(items):
        text = str(item) if i == 0 else tr("{items}, {item}", items=text, item=item)
    return text


def tr_in(language: str, message: str, /, **fields: Any) -> str:
    """:func:`tr` in ``language``, whatever the current language is (the grader writes in
    each learner's own).

    Example:
        >>> tr_in("zh_CN", "bytes"), current_language() == ENGLISH
        ('字节', True)
    """
    with use_language(language):
        return tr(message, **fields)


class _WideFormatter(string.Formatter):
    """``str.format`` whose widths count terminal columns: a CJK character is two.

    ``tr("{label:8s}|", label="周期")`` gives ``"周期    |"`` (8 columns), so a table printed
    through :func:`tr` stays aligned when its fields are Chinese.
    """

    _WIDTH = re.compile(r"^((?:.?[<>=^])?[-+ ]?z?#?0?)(\d+)(.*)$")

    def format_field(self, value: Any, format_spec: str) -> str:
        match = self._WIDTH.match(format_spec) if isinstance(value, str) else None
        if match:
            extra = text_width(value) - len(value)  # what str.format does not count
            width = max(0, int(match[2]) - extra)
            format_spec = f"{match[1]}{width}{match[3]}"
        return super().format_field(value, format_spec)


_WIDE = _WideFormatter()


def N_(message: str) -> str:  # noqa: N802 -- the gettext name for "translate later"
    """Mark a string for extraction into the catalogue without translating it yet.

    For tables of labels built at import time: keep the English in the table and call
    ``tr(TABLE[key])`` where the label is shown.
    """
    return message


@functools.cache
def catalogue(language: str) -> dict[str, str]:
    """Translated, up-to-date entries of ``language``'s catalogue (msgid -> msgstr)."""
    path = LOCALES / language / "LC_MESSAGES" / "chipsim.po"
    return read_po(path) if path.is_file() else {}


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def _unquote(line: str) -> str:
    body = line.strip()
    if len(body) < 2 or body[0] != '"' or body[-1] != '"':
        raise ValueError(f"not a quoted PO string: {line!r}")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], m[1]), body[1:-1])


def read_po(path: Path) -> dict[str, str]:
    """The translated entries of a gettext ``.po`` file, without fuzzy or obsolete ones.

    A small reader (chipsim depends on no i18n package): comments, ``#, fuzzy`` flags,
    ``msgctxt`` (kept as ``context\\x04msgid``, as gettext does), multi-line strings. Plural
    entries are skipped.
    """
    entries: dict[str, str] = {}
    entry: dict[str, str] = {}
    flags: set[str] = set()
    field: str | None = None

    def finish() -> None:
        nonlocal entry, flags, field
        msgid, msgstr = entry.get("msgid", ""), entry.get("msgstr", "")
        if msgid and msgstr and "fuzzy" not in flags and "msgid_plural" not in entry:
            key = f"{entry['msgctxt']}\x04{msgid}" if "msgctxt" in entry else msgid
            entries[key] = msgstr
        entry, flags, field = {}, set(), None

    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        try:
            if not line or line.startswith("#~"):
                continue
            if line.startswith("#"):
                if "msgstr" in entry:
                    finish()
                if line.startswith("#,"):
                    flags |= {f.strip() for f in line[2:].split(",")}
            elif line.startswith('"'):
                if field is None:
                    raise ValueError("a string continues no msgid/msgstr")
                entry[field] += _unquote(line)
            else:
                keyword, _, rest = line.partition(" ")
                if keyword in ("msgctxt", "msgid") and "msgstr" in entry:
                    finish()
                field = keyword
                entry[field] = _unquote(rest)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    finish()
    return entries


def on_matplotlib(hook: Callable[[], None]) -> Callable[[], None]:
    """Run ``hook`` once matplotlib is in use and a language other than English is chosen.

    :mod:`chipsim.viz` registers the font chipsim ships (:mod:`chipsim.viz.fonts`) this way, so
    that Chinese labels draw; ``import chipsim`` imports viz, hence the hook is always there.
    """
    _MATPLOTLIB_HOOKS.append(hook)
    return hook


def _prepare_matplotlib() -> None:
    """Let matplotlib draw Chinese: run the hooks of :func:`on_matplotlib` (once).

    Runs at the first translated string (or language switch) after matplotlib was imported;
    chipsim does not import matplotlib itself until it draws.
    """
    global _fonts_ready
    if _fonts_ready or "matplotlib" not in sys.modules:
        return
    _fonts_ready = True
    for hook in _MATPLOTLIB_HOOKS:
        hook()
