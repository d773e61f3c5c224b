"""``make lab``: a chapter opens as a notebook and its MyST renders as it does in the book.

JupyterLab is started as ``make lab`` starts it (the venv's JupyterLab and its settings), on a
copy of the chapters (opening a chapter may save it: the course's own files stay untouched),
with its application object exposed so the test can ask which viewer opens a chapter -- the one
a double-click uses -- and open it with that viewer. jupyterlab-myst must render the chapter's
admonitions and cross-references: no ``:::{admonition}`` or ``{term}`` left as text.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOKEN = "chipsim-lab-test"
TIMEOUT = 120_000  # ms: JupyterLab's first load on a busy 2-core machine is slow
CHAPTER = "book/execution_units.md"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    home = tmp_path_factory.mktemp("lab-home")  # user settings and workspaces: not the tester's
    course = tmp_path_factory.mktemp("lab-course")
    shutil.copytree(ROOT / "book", course / "book", ignore=shutil.ignore_patterns("_build"))
    port = _free_port()
    env = dict(os.environ, HOME=str(home), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    cmd = [str(BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1"]
    cmd += [f"--IdentityProvider.token={TOKEN}", f"--notebook-dir={course}", "--allow-root"]
    cmd += ["--LabApp.expose_app_in_browser=True"]
    log = (home / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield base
        assert (course / CHAPTER).is_file()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def chapter(lab, browser):
    """The chapter opened in JupyterLab with the viewer a double-click uses."""
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    tab = context.new_page()
    tab.goto(f"{lab}/lab?reset&token={TOKEN}", timeout=TIMEOUT)
    tab.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=TIMEOUT)
    tab.wait_for_function(
        f"window.jupyterapp.docRegistry.defaultWidgetFactory('{CHAPTER}').name !== 'Editor'",
        timeout=30_000,
    )
    factory = tab.evaluate(f"window.jupyterapp.docRegistry.defaultWidgetFactory('{CHAPTER}').name")
    tab.evaluate(f"window.jupyterapp.commands.execute('docmanager:open', {{path: '{CHAPTER}'}})")
    tab.locator(".jp-MarkdownCell", has_text="Learning goals").first.wait_for(timeout=TIMEOUT)
    tab.wait_for_timeout(3000)  # every Markdown cell rendered
    yield tab, factory
    context.close()


def test_a_chapter_opens_as_a_notebook(chapter):
    _, factory = chapter
    assert factory == "Jupytext Notebook"


def test_the_chapters_myst_renders_in_lab(chapter, screenshots):
    tab, _ = chapter
    tab.screenshot(path=str(screenshots / "lab_execution_units.png"))
    rendered = "\n".join(tab.locator(".jp-MarkdownCell").all_inner_texts())
    assert "Learning goals" in rendered
    for raw in (":::{admonition}", "{term}`", "{doc}`", "{ref}`", ":class: dropdown"):
        assert raw not in rendered, f"raw MyST in JupyterLab: {raw}"
    assert tab.locator(".jp-MarkdownCell aside, .jp-MarkdownCell details").count() >= 3
