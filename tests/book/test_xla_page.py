"""The XLA page without JAX: where ``import jax`` fails, the page says so in one admonition,
runs every cell, glues every value its text uses, and writes nothing to stderr (which the
strict build would turn into a failure). With JAX the strict book build runs it."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from chipsim.viz.glue import GLUE_PREFIX

pytestmark = pytest.mark.book

PAGE = Path(__file__).resolve().parents[2] / "book" / "xla.md"
HIDE_JAX = """
import importlib.abc, sys
class _NoJax(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("jax", "jaxlib"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _NoJax())
"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    notebook = jupytext.read(PAGE)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(HIDE_JAX))
    path = tmp_path_factory.mktemp("xla-page")
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": path}}
    ).execute()
    return notebook


def outputs(notebook):
    for cell in notebook.cells:
        if cell.cell_type == "code":
            yield from cell.get("outputs", [])


def test_one_admonition_says_jax_is_missing(executed):
    shown = [
        o["data"]["text/markdown"]
        for o in outputs(executed)
        if o.output_type == "display_data" and "text/markdown" in o.get("data", {})
    ]
    admonitions = [m for m in shown if m.startswith(":::{admonition}")]
    assert len(admonitions) == 1 and "No module named 'jax'" in admonitions[0]


def test_every_value_the_text_uses_is_glued(executed):
    used = set(re.findall(r"\{glue:text\}`([\w]+)", PAGE.read_text(encoding="utf-8")))
    glued = {
        o["metadata"]["scrapbook"]["name"]
        for o in outputs(executed)
        if o.output_type == "display_data" and any(k.startswith(GLUE_PREFIX) for k in o["data"])
    }
    assert used and used <= glued, sorted(used - glued)


def test_nothing_on_stderr(executed):
    assert not [o for o in outputs(executed) if o.get("name") == "stderr"]
