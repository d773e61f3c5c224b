"""The exercises' instructions in both languages, in the same notebooks (issue 15).

Every markdown cell of an assignment holds the English, a rule (``---``), then the Chinese.
The Chinese must name the same code as the English (functions, imports, formulas in
backticks), so a learner who reads only the Chinese writes the same answer; the graded cells
are untouched by the translation (they are compared with the released notebook elsewhere).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")
NOTEBOOKS = [
    ROOT / folder / name / f"{name}.ipynb"
    for folder in ("solutions", "exercises")
    for name in ASSIGNMENTS
]
RULE = "\n\n---\n\n"
HAN = re.compile(r"[\u4e00-\u9fff]")
CODE = re.compile(r"`([^`]+)`")


def code_spans(text: str) -> set[str]:
    return {" ".join(span.split()) for span in CODE.findall(text)}


def markdown_cells(path: Path) -> list:
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_instruction_cell_is_english_then_chinese(path):
    cells = markdown_cells(path)
    assert cells
    for cell in cells:
        assert cell.source.count(RULE) == 1, f"{cell.id}: English, ---, Chinese"
        english, chinese = cell.source.split(RULE)
        assert not HAN.search(re.sub(r"\([^)]*\)|`[^`]*`|\*[^*]*\*", "", english)), (
            f"{cell.id}: the English part has Chinese outside glosses"
        )
        assert len(HAN.findall(chinese)) > 0.2 * len(chinese.replace(" ", "")), cell.id
        missing = code_spans(english) - code_spans(chinese)
        assert not missing, f"{cell.id}: the Chinese does not mention {sorted(missing)}"
        # same headings, same table shape
        assert [h.count("#") for h in re.findall(r"^#+ ", english, re.M)] == [
            h.count("#") for h in re.findall(r"^#+ ", chinese, re.M)
        ], cell.id
        assert english.count("|") == chinese.count("|"), cell.id


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_released_instructions_are_the_solutions(name):
    source = [c.source for c in markdown_cells(ROOT / "solutions" / name / f"{name}.ipynb")]
    released = [c.source for c in markdown_cells(ROOT / "exercises" / name / f"{name}.ipynb")]
    assert released == source, "run `make exercises`"


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_first_cell_says_how_to_get_chinese_feedback(name):
    english, chinese = markdown_cells(ROOT / "exercises" / name / f"{name}.ipynb")[0].source.split(
        RULE
    )
    call = 'set_language("zh_CN")'
    assert call in english and call in chinese
    assert "反馈" in chinese and "中文" in chinese
