"""Downloaded chapters read as the book does: glued values written in, MyST made Markdown.

``book/_ext/notebook_markdown.py`` rewrites the Markdown cells of the ⬇ ``.ipynb`` (any Jupyter
shows plain Markdown; only jupyterlab-myst knows MyST, and no Jupyter knows MyST-NB's glue).
The fast tests convert every chapter's real Markdown with stand-in values and check that no
MyST syntax is left; the build test (tests/book/test_build.py) checks the built downloads.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jupytext
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "book" / "_ext"))
from bookbuild import ROOT, notebook_pages  # noqa: E402
from notebook_markdown import format_plain_text, plain_markdown  # noqa: E402

#: MyST a plain Markdown renderer would show as text
RAW_MYST = re.compile(r"\{[\w:.-]+\}`|^\s*:{3,}\{|^\s*\([\w:.-]+\)=\s*$|^%", re.M)


def without_code(markdown: str) -> str:
    text = re.sub(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", "", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def test_roles_admonitions_targets_and_glue_become_markdown():
    source = textwrap.dedent(
        """\
        (sec-label)=
        ## Counting {glue:text}`n_mma:,` tiles

        A {term}`kernel`, {term}`SMs <SM>`, {doc}`static_mapping`, {ref}`the ref <x>`,
        {ref}`placement-step` and `code {glue:text}` stay readable. {py:class}`Graph`.
        % a comment for authors

        :::{admonition} 1. Why {glue:text}`share:.0%`?
        :class: dropdown

        Because {glue:md}`why`.
        :::

        :::{admonition} Learning goals
        - one
        - two
        :::

        ```python
        print("{glue:text}`kept`")
        ```
        """
    )
    glue = {
        "n_mma": {"text/plain": "4096"},
        "share": {"text/plain": "0.125"},
        "why": {"text/markdown": "**it fits**", "text/plain": "'it fits'"},
    }
    titles = {("doc", "static_mapping"): "4.3 Mapping", ("ref", "placement-step"): "Step 3"}
    out = plain_markdown(source, glue, lambda role, target: titles.get((role, target)))
    assert "## Counting 4,096 tiles" in out
    assert "A kernel, SMs, 4.3 Mapping, the ref,\nStep 3 and `code {glue:text}`" in out
    assert "`Graph`" in out
    assert "<details><summary><b>1. Why 12%?</b></summary>" in out and "Because **it fits**." in out
    assert "> **Learning goals**\n>\n> - one\n> - two" in out
    assert 'print("{glue:text}`kept`")' in out  # code is code
    assert "sec-label" not in out and "comment for authors" not in out


def test_a_missing_glued_value_names_the_key():
    with pytest.raises(KeyError, match="no glued value 'gone'"):
        plain_markdown("{glue:text}`gone:.1f`", {})


@pytest.mark.parametrize(
    ("text", "spec", "shown"),
    [("12345", ",", "12,345"), ("0.1234", ".1%", "12.3%"), ("'faster'", "s", "faster"),
     ("2.0", ".0f", "2"), ("7", "", "7")],  # fmt: skip
)
def test_values_are_formatted_as_the_book_formats_them(text, spec, shown):
    from myst_nb.core.variables import format_plain_text as book_format

    assert format_plain_text(text, spec) == shown == book_format(text, spec)


@pytest.mark.parametrize("page", notebook_pages())
def test_every_construct_a_chapter_uses_is_converted(page):
    notebook = jupytext.read(ROOT / f"{page}.md")
    markdown = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    keys = {k.rsplit(":", 1)[0] if r == "glue:text" else k
            for r, k in re.findall(r"\{(glue(?::\w*)?)\}`([^`]*)`", markdown)}  # fmt: skip
    glue = {k: {"text/plain": "1", "text/markdown": "1"} for k in keys}
    out = plain_markdown(markdown, glue, lambda role, target: "Title")
    left = RAW_MYST.findall(without_code(out))
    assert not left, f"{page}: MyST left in the downloaded notebook: {left[:5]}"


def test_jupyterlab_myst_is_installed_and_enabled_for_make_lab():
    """``make lab`` renders chapters' MyST (admonitions, terms, cross-references) in place."""
    jupyter = Path(sys.executable).with_name("jupyter")
    listing = subprocess.run(
        [str(jupyter), "labextension", "list"], capture_output=True, text=True, timeout=120
    )
    text = listing.stdout + listing.stderr
    line = next((x for x in text.splitlines() if "jupyterlab-myst" in x), "")
    assert "enabled" in line, text  # that it renders: tests/browser/test_lab_chapters.py
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^jupyterlab-myst", requirements, re.M)
