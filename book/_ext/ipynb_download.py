"""Offer every chapter as a runnable ``.ipynb`` in the page's download menu.

Chapters are MyST-Markdown notebooks. sphinx-book-theme only lists an ``.ipynb`` in the
download dropdown when the page context has ``ipynb_source`` (it sets that itself only when
launch buttons such as Binder are configured, which this offline course has none of). This
extension fills the gap: for every page that is a notebook (it has a ``kernelspec``) it writes
``_sources/<page>.ipynb`` into the HTML output and sets ``ipynb_source`` so the theme adds the
".ipynb" entry. The notebook is the *executed* copy MyST-NB left in ``jupyter_execute/`` (so
learners see the outputs and can re-run every cell); if that copy is missing, the Markdown
source is converted with jupytext (inputs only, still runnable). Its Markdown cells are then
made plain Markdown with the glued values written in (``notebook_markdown.py``), so that it
reads as the page does in any Jupyter.
"""

from __future__ import annotations

import json
import shutil
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import jupytext
from sphinx.application import Sphinx
from sphinx.util import docname_join


def _write_notebook(app: Sphinx, pagename: str) -> Path:
    """Write ``_sources/<pagename>.ipynb`` in the HTML output and return its path."""
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if executed.is_file():
        shutil.copyfile(executed, target)
    else:
        notebook = jupytext.read(app.env.doc2path(pagename))
        jupytext.write(notebook, target, fmt="ipynb")
    return target


def add_ipynb_download(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context`` hook: runs before the theme builds its header buttons (501)."""
    if doctree is None or app.builder.format != "html":
        return
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return  # a plain Markdown page (glossary, claim table) is not a notebook
    _write_notebook(app, pagename)
    context["ipynb_source"] = f"{pagename}.ipynb"


def plain_download(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``html-page-context``, last (after a translated edition translated the notebook): the
    downloaded notebook's MyST made plain Markdown, glued values written in
    (``notebook_markdown.py``), so any Jupyter shows the chapter as the book does."""
    if doctree is None or app.builder.format != "html" or not context.get("ipynb_source"):
        return
    source = Path(app.env.doc2path(pagename, False)).as_posix()
    if any(fnmatch(source, p) for p in app.config.nb_execution_excludepatterns or ()):
        return  # not run in this build (`make chapter` runs one page): no values to write in
    import nbformat
    from notebook_markdown import plain_notebook

    path = Path(app.outdir) / "_sources" / context["ipynb_source"]
    labels = app.env.domaindata["std"]["labels"]

    def resolve(role: str, target: str) -> str | None:
        if role == "doc":
            title = app.env.titles.get(docname_join(pagename, target))
            return title.astext() if title is not None else None
        label = labels.get(target.lower())
        return label[2] if label else None

    # MyST-NB takes the glued values out of the executed notebook and keeps them beside it
    stored = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.glue.json"
    glue = {}
    if stored.is_file():
        glue = {k: v["data"] for k, v in json.loads(stored.read_text("utf-8")).items()}
    notebook = nbformat.read(path, as_version=4)
    nbformat.write(plain_notebook(notebook, resolve, glue), path)


# The theme opens the link in a new tab, where browsers show a notebook as raw JSON; the
# ``download`` attribute makes them save the file instead.
_DOWNLOAD_JS = """
document.addEventListener("DOMContentLoaded", () => {
  for (const link of document.querySelectorAll("a.btn-download-notebook-button")) {
    link.setAttribute("download", link.getAttribute("href").split("/").pop());
    link.removeAttribute("target");
  }
});
"""


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", add_ipynb_download, priority=500)
    app.connect("html-page-context", plain_download, priority=600)  # after translation (502)
    app.add_js_file(None, body=_DOWNLOAD_JS)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
