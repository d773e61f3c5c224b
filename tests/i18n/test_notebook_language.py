"""A notebook's reader gets feedback in the notebook's language, with no set_language (issue 26).

The rule, as the exercise notebooks and the Exercises page state it: feedback speaks the
language you chose (``set_language``, ``CHIPSIM_LANG``), else the language the notebook names
(a chapter downloaded from the 中文 edition names Chinese), else your system's. Jupyter tells a
kernel which notebook it runs (``JPY_SESSION_NAME``), so chipsim reads that notebook's metadata.
When grading, the language the learner's kernel recorded in the answers comes first, then the
notebook's own.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import nbformat
import pytest

from chipsim import i18n

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def nothing_chosen(monkeypatch):
    for var in ("CHIPSIM_LANG", i18n.NOTEBOOK_VAR, *i18n.LOCALE_VARS):
        monkeypatch.delenv(var, raising=False)
    i18n.set_language(None)
    yield
    i18n.set_language(None)


def notebook(folder: Path, language=None) -> Path:
    nb = nbformat.v4.new_notebook()
    if language is not None:
        nb.metadata["chipsim"] = {"language": language}
    path = folder / "fusion.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_notebook_names_the_language(tmp_path, monkeypatch):
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(notebook(tmp_path, "zh_CN")))
    assert i18n.current_language() == "zh_CN"
    assert i18n.tr("cycles") == "周期"


def test_a_choice_beats_the_notebook_and_the_notebook_beats_the_locale(tmp_path, monkeypatch):
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(notebook(tmp_path, "zh")))
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert i18n.current_language() == "zh_CN"  # the notebook's, over the system's
    monkeypatch.setenv("CHIPSIM_LANG", "en")
    assert i18n.current_language() == "en"
    monkeypatch.delenv("CHIPSIM_LANG")
    i18n.set_language("en")
    assert i18n.current_language() == "en"


@pytest.mark.parametrize("declared", [None, "klingon", 42, "zh" * 100, ["zh_CN"]])
def test_a_notebook_naming_nothing_usable_leaves_the_locale(tmp_path, monkeypatch, declared):
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(notebook(tmp_path, declared)))
    assert i18n.current_language() == "en"
    monkeypatch.setenv("LC_ALL", "zh_CN.UTF-8")
    assert i18n.current_language() == "zh_CN"


def test_no_notebook_or_an_unreadable_one_is_no_error(tmp_path, monkeypatch):
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(tmp_path / "gone.ipynb"))
    assert i18n.current_language() == "en"
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json", encoding="utf-8")
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(broken))
    assert i18n.current_language() == "en"
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, "a console, not a notebook")
    assert i18n.current_language() == "en"


def test_changing_the_notebooks_language_takes_effect(tmp_path, monkeypatch):
    path = notebook(tmp_path, "zh_CN")
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(path))
    assert i18n.current_language() == "zh_CN"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["metadata"]["chipsim"]["language"] = "en"
    path.write_text(json.dumps(data), encoding="utf-8")
    import os

    os.utime(path, ns=(1, 10**18))  # a different modification time, whatever the clock
    assert i18n.current_language() == "en"


def test_a_test_cell_records_the_notebooks_language(tmp_path, monkeypatch):
    """The answer a learner's test cell writes carries the notebook's language to the grader."""
    from grader import submit

    monkeypatch.setenv(i18n.NOTEBOOK_VAR, str(notebook(tmp_path, "zh_CN")))

    def planner(records, alignment=64):
        raise NotImplementedError("first_fit_plan")

    answer = submit("memory_first_fit", planner, score=False)
    assert answer.doc["language"] == "zh_CN"


def test_grading_keeps_the_answers_language_else_the_notebooks():
    from grader.course.sanitize import RememberLanguage
    from grader.scoring.answer import MIME, encode

    def graded(declared, answered):
        nb = nbformat.v4.new_notebook()
        nb.metadata["chipsim"] = {"language": declared}
        cell = nbformat.v4.new_code_cell("submit(...)")
        if answered is not None:
            doc = encode("memory_first_fit", {}, language=answered)
            cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: doc})]
        nb.cells.append(cell)
        nb, _ = RememberLanguage().preprocess(nb, {})
        return nb.metadata["chipsim"].get("language")

    assert graded("zh_CN", None) == "zh_CN"  # no answer says: the notebook's own
    assert graded("zh_CN", "en") == "en"  # the learner's kernel spoke English
    assert graded("en", "zh_CN") == "zh_CN"
    assert graded("klingon", None) is None  # learner data: dropped, English by default
    assert graded(["zh_CN"], None) is None


def test_a_chapter_from_the_chinese_edition_names_its_language(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "notebook_translation", ROOT / "book" / "_ext" / "notebook_translation.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("notebook_translation", module)
    spec.loader.exec_module(module)
    path = notebook(tmp_path)
    module.translate_notebook(path, lambda msgid: None, "set_language('zh_CN')", "zh_CN")
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["chipsim"]["language"] == "zh_CN"
    assert nb.cells[0].source == "set_language('zh_CN')"


@pytest.mark.parametrize("name", ["fusion", "memory_planning", "instruction_generation"])
def test_the_exercise_header_states_the_rule_in_both_languages(name):
    nb = nbformat.read(ROOT / "exercises" / name / f"{name}.ipynb", as_version=4)
    english, chinese = nb.cells[0].source.split("\n\n---\n\n")
    assert "CHIPSIM_LANG=zh_CN make lab" in english and "CHIPSIM_LANG=zh_CN make lab" in chinese
    assert "notebook" in english and "笔记本" in chinese


def test_a_notebook_named_relative_to_the_server_root_is_found(tmp_path, monkeypatch):
    """An older jupyter_server names the notebook from its root; the kernel runs beside it."""
    path = notebook(tmp_path, "zh_CN")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(i18n.NOTEBOOK_VAR, f"exercises/fusion/{path.name}")
    assert i18n.current_language() == "zh_CN"
