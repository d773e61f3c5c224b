"""The exercise notebooks' code speaks to a Chinese learner in Chinese too (issue 26 item 6).

The instructions are English, a rule, then Chinese (test_exercise_instructions.py). What the
learner reads in the released code cells follows suit: every comment and every docstring has
its Chinese; what a self-check prints and what an unwritten function raises go through
``tr``, so they appear in the learner's language, and chipsim.po has the Chinese for each.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

from chipsim.i18n import read_po, use_language

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ("fusion", "memory_planning", "instruction_generation")
RELEASED = [ROOT / "exercises" / name / f"{name}.ipynb" for name in ASSIGNMENTS]
HAN = re.compile(r"[\u4e00-\u9fff]")
NBGRADER_MARK = re.compile(r"^#+ (BEGIN|END) (SOLUTION|HIDDEN TESTS)$")
CATALOGUE = read_po(ROOT / "chipsim" / "locales" / "zh_CN" / "LC_MESSAGES" / "chipsim.po")


def code_cells(path: Path) -> list[tuple[str, str]]:
    nb = nbformat.read(path, as_version=4)
    return [
        (f"{path.parent.name} cell {i}", c.source)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
    ]


CELLS = [cell for path in RELEASED for cell in code_cells(path)]


def comment_blocks(source: str) -> list[str]:
    """Comments, a run of full-line comments counting as one block (English line, Chinese line)."""
    blocks: list[list[str]] = []
    last_line = None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT or NBGRADER_MARK.match(tok.string):
            continue
        own_line = not tok.line[: tok.start[1]].strip()
        if own_line and last_line == tok.start[0] - 1 and blocks:
            blocks[-1].append(tok.string)
        else:
            blocks.append([tok.string])
        last_line = tok.start[0] if own_line else None
    return ["\n".join(b) for b in blocks]


def calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == name
    ]


def is_tr(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr"


@pytest.mark.parametrize("where, source", CELLS, ids=[w for w, _ in CELLS])
def test_every_comment_and_docstring_has_its_chinese(where, source):
    lonely = [b for b in comment_blocks(source) if not HAN.search(b)]
    assert not lonely, f"{where}: comments without Chinese: {lonely}"
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            doc = ast.get_docstring(node)
            assert doc is None or HAN.search(doc), (
                f"{where}: {node.name}'s docstring is English only"
            )


@pytest.mark.parametrize("where, source", CELLS, ids=[w for w, _ in CELLS])
def test_what_a_cell_prints_or_raises_goes_through_tr(where, source):
    tree = ast.parse(source)
    for call in calls(tree, "print"):
        for arg in call.args:
            literal = isinstance(arg, ast.JoinedStr) or (
                isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            )
            assert not literal, f"{where}: print({ast.unparse(arg)}) is English only: use tr"
    for call in calls(tree, "NotImplementedError"):
        assert call.args and is_tr(call.args[0]), f"{where}: {ast.unparse(call)} needs tr"


def messages() -> list[tuple[str, dict]]:
    found = []
    for _, source in CELLS:
        for call in calls(ast.parse(source), "tr"):
            fields = {kw.arg: 1 for kw in call.keywords}
            found.append((call.args[0].value, fields))
    return found


def test_every_message_of_the_notebooks_has_its_chinese():
    found = messages()
    assert len(found) >= 10  # the self-checks and the stubs of both notebooks
    for msgid, fields in found:
        assert HAN.search(CATALOGUE.get(msgid, "")), f"chipsim.po has no Chinese for {msgid!r}"
        with use_language("zh_CN"):
            from chipsim.i18n import tr

            assert HAN.search(tr(msgid, **fields)), msgid


def test_an_unwritten_function_says_so_in_the_learners_language():
    """The stub's error, raised in a Chinese kernel, is Chinese and names the function."""
    from chipsim.i18n import tr

    stub = next(src for where, src in CELLS if "def pattern_of" in src)
    call = calls(ast.parse(stub), "NotImplementedError")[0].args[0]
    msgid = call.args[0].value
    with use_language("zh_CN"):
        chinese = tr(msgid, name="pattern_of")
    english = tr(msgid, name="pattern_of")
    assert "pattern_of" in chinese and HAN.search(chinese)
    assert "pattern_of" in english and not HAN.search(english)


def test_the_stub_nbgrader_leaves_speaks_both_languages():
    stubs = [src for _, src in CELLS if "# YOUR CODE HERE" in src]
    assert stubs
    assert all("# YOUR CODE HERE / 在这里写你的代码" in src for src in stubs)
