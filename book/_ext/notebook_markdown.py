"""A downloaded chapter's Markdown cells as plain Markdown: what Jupyter renders by itself.

The chapters are MyST: numbers are glued from cells (``{glue:text}`n_mma```), terms and pages
are cross-references (``{term}``, ``{doc}``, ``{ref}``), self-checks are ``:::{admonition}``
dropdowns. Sphinx turns all of that into HTML; a notebook opened in a Jupyter without
jupyterlab-myst shows it raw. So the ``.ipynb`` offered for download is rewritten:

* ``{glue:text}`key:fmt``` becomes the value the cell computed, formatted as the book formats
  it, ``{glue:md}`key``` its Markdown, ``{glue}`key``` its text;
* ``{term}``, ``{doc}``, ``{ref}`` become their text: the explicit title (``{doc}`text <page>```)
  or, without one, the page's or section's title (``resolve``); other roles become code;
* an admonition becomes a block quote headed by its title, a dropdown (``:class: dropdown``)
  a ``<details>`` element that opens on a click, as in the book;
* targets (``(label)=``) and MyST comments (``% ...``) disappear.

Code blocks (fenced with backticks or tildes) are left as they are.
"""

from __future__ import annotations

import re
from ast import literal_eval
from collections.abc import Callable, Mapping
from typing import Any

#: the prefix MyST-NB puts on a hidden glued output's MIME types (chipsim.viz.glue)
GLUE_PREFIX = "application/papermill.record/"
Resolve = Callable[[str, str], "str | None"]  # (role, target) -> title, or None

_ROLE = re.compile(r"\{([\w:.-]*)\}`([^`]*)`")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_DIRECTIVE = re.compile(r"^(\s*)(:{3,})\{([\w-]+)\}\s*(.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_LABELS = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important",
           "hint": "Hint", "seealso": "See also", "caution": "Caution"}  # fmt: skip


def glued_values(notebook: Any) -> dict[str, dict[str, Any]]:
    """Every glued value of an executed notebook: name -> its MIME bundle (prefix removed)."""
    values: dict[str, dict[str, Any]] = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            data = output.get("data", {})
            values[name] = {k.removeprefix(GLUE_PREFIX): v for k, v in data.items()}
    return values


def format_plain_text(text: str, fmt_spec: str) -> str:
    """A glued text/plain value formatted as ``{glue:text}`` formats it (myst_nb's rule)."""
    try:
        value = literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt_spec == "":
        return str(value)
    kind = fmt_spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, fmt_spec)


def _text(bundle: Mapping[str, Any], key: str) -> str:
    text = bundle.get(key, "")
    return "".join(text) if isinstance(text, list) else str(text)


def _role(name: str, content: str, glue: Mapping[str, Mapping[str, Any]], resolve: Resolve) -> str:
    explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", content, flags=re.S)
    if name in ("glue:text", "glue", "glue:", "glue:md"):
        key, fmt = content, ""
        if name == "glue:text":  # key:format, as myst_nb reads it ("s" when there is none)
            key, fmt = content.rsplit(":", 1) if ":" in content else (content, "s")
        if key not in glue:
            raise KeyError(f"no glued value {key!r} in the notebook (for {{{name}}}`{content}`)")
        if name == "glue:md":
            return _text(glue[key], "text/markdown").strip() or _text(glue[key], "text/plain")
        return format_plain_text(_text(glue[key], "text/plain"), fmt)
    if name in ("term", "doc", "ref", "numref", "any"):
        if explicit:
            return explicit.group(1)
        if name == "term":
            return content
        return resolve(name, content) or content
    return f"`{content}`"  # {py:class}`Graph` and other code-like roles


def inline(text: str, glue: Mapping[str, Mapping[str, Any]], resolve: Resolve) -> str:
    """``text`` with every role replaced (inline code spans left alone)."""
    parts = re.split(r"(`[^`\n]*`)", text)
    out, i = [], 0
    while i < len(parts):
        part = parts[i]
        # a role is "{name}" at the end of a plain part, then a `code` part
        role = re.search(r"\{([\w:.-]*)\}$", part)
        if role and i + 1 < len(parts) and parts[i + 1].startswith("`"):
            out.append(part[: role.start()])
            out.append(_role(role.group(1), parts[i + 1][1:-1], glue, resolve))
            i += 2
            continue
        out.append(part)
        i += 1
    return "".join(out)


def plain_markdown(
    source: str, glue: Mapping[str, Mapping[str, Any]], resolve: Resolve = lambda r, t: None
) -> str:
    """A MyST Markdown cell as plain Markdown (see the module docstring)."""
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:  # a code block: copied as it is, up to its closing fence
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(2)):
                end += 1
            out += lines[i : end + 1]
            i = end + 1
            continue
        directive = _DIRECTIVE.match(line)
        if directive:
            indent, colons, name, title = directive.groups()
            end, depth = i + 1, 0
            while end < len(lines):
                inner = _DIRECTIVE.match(lines[end])
                if inner and len(inner.group(2)) == len(colons):
                    depth += 1
                elif lines[end].strip() == colons:
                    if depth == 0:
                        break
                    depth -= 1
                end += 1
            body = lines[i + 1 : end]
            options = [b for b in body if _OPTION.match(b)]
            body = [b for b in body if not _OPTION.match(b)]
            text = plain_markdown("\n".join(body), glue, resolve).strip("\n")
            heading = inline(title, glue, resolve) or _LABELS.get(name, name.title())
            if any("dropdown" in o for o in options):
                out += [f"<details><summary><b>{heading}</b></summary>", "", text, "", "</details>"]
            else:
                out += [f"> **{heading}**", ">"] + [f"> {t}".rstrip() for t in text.split("\n")]
            i = end + 1
            continue
        if re.fullmatch(r"\s*\([\w:.-]+\)=\s*", line) or re.match(r"^%", line):
            i += 1  # a target or a MyST comment
            continue
        out.append(inline(line, glue, resolve))
        i += 1
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text) + ("\n" if source.endswith("\n") else "")


def plain_notebook(
    notebook: Any,
    resolve: Resolve = lambda r, t: None,
    glue: Mapping[str, Mapping[str, Any]] | None = None,
) -> Any:
    """``notebook`` with every Markdown cell made plain Markdown (in place; returned).

    ``glue``: the glued values (name -> MIME bundle) where the notebook's outputs no longer
    hold them (MyST-NB keeps them beside the executed notebook, ``<page>.glue.json``).
    """
    glue = {**glued_values(notebook), **(glue or {})}
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, glue, resolve)
    return notebook
