"""Every chapter, downloaded as a notebook, runs top to bottom with only chipsim installed.

A learner who downloads a chapter (the page's ".ipynb" menu) runs it in their own Jupyter,
where the book's tools (myst_nb, Jupyter Book, Sphinx, jupytext ...) are not installed. The
test runs each chapter in a fresh kernel that refuses to import any package outside chipsim's
own dependencies and the kernel's: what the chapter needs beyond that would fail for them.
"""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from chipsim.viz.glue import GLUE_PREFIX, glue

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from bookbuild import notebook_pages  # noqa: E402

PAGES = notebook_pages()


def _closure(*roots: str) -> set[str]:
    """The distributions ``roots`` need (their non-extra requirements, recursively)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = re.split(r"[ <>=!~;\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in seen:
            continue
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo += [r for r in requires if "extra ==" not in r]
    return seen


def blocked_modules() -> list[str]:
    """Top-level modules a learner with only chipsim (and a Jupyter kernel) does not have."""
    allowed = _closure("chipsim", "ipykernel")
    blocked = []
    for module, dists in metadata.packages_distributions().items():
        if not any(d.lower().replace("_", "-") in allowed for d in dists):
            blocked.append(module)
    return sorted(set(blocked) - set(sys.stdlib_module_names))


GUARD = """
import importlib.abc, sys
class _OnlyChipsim(importlib.abc.MetaPathFinder):
    blocked = set({blocked!r})
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {{name!r}} (not installed with chipsim)")
        return None
sys.meta_path.insert(0, _OnlyChipsim())
"""


def test_the_book_tools_are_blocked_and_chipsim_is_not():
    blocked = blocked_modules()
    assert {"myst_nb", "jupyter_book", "sphinx", "jupytext"} <= set(blocked)
    assert not {"chipsim", "numpy", "matplotlib", "networkx", "IPython"} & set(blocked)


@pytest.mark.parametrize("page", PAGES)
def test_chapter_imports_only_what_chipsim_installs(page):
    blocked = set(blocked_modules())
    notebook = jupytext.read(ROOT / f"{page}.md")
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in blocked, f"{page} imports {name}"


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_downloaded_chapter_runs_with_only_chipsim(page, tmp_path):
    notebook = jupytext.read(ROOT / f"{page}.md")
    notebook.cells.insert(0, nbformat.v4.new_code_cell(GUARD.format(blocked=blocked_modules())))
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # raises CellExecutionError naming the cell that failed


def test_glue_writes_what_myst_nb_reads():
    """Same outputs as ``myst_nb.glue`` (which the book's build reads), without myst_nb."""
    from IPython.core.interactiveshell import InteractiveShell
    from myst_nb.ext.glue import glue as myst_glue

    shell = InteractiveShell.instance()
    shown = []
    shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append((data, metadata))
    try:
        for fn in (glue, myst_glue):
            fn("speedup", 2.5, display=False)
            fn("label", "faster")
    finally:
        InteractiveShell.clear_instance()
    assert shown[:2] == shown[2:]
    assert shown[0][0] == {GLUE_PREFIX + "text/plain": "2.5"}
    assert shown[0][1]["scrapbook"] == {"name": "speedup", "mime_prefix": GLUE_PREFIX}
