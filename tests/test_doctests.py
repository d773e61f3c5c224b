"""Every docstring example of chipsim and the grader runs: ``pytest`` collects both packages'
doctests (``pyproject.toml``), and every example written in a docstring is one that doctest
finds (none hidden where it never looks, like a nested function's docstring).
(A stale example is a bug a learner copies.)"""

from __future__ import annotations

import ast
import doctest
import importlib
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("chipsim", "grader")


def written_examples(path: Path) -> int:
    """``>>>`` prompts in the docstrings of ``path`` (module, classes, functions, nested too)."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False) or ""
            count += sum(1 for line in doc.splitlines() if line.strip().startswith(">>>"))
    return count


def modules_with_examples() -> list[tuple[str, Path]]:
    out = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name != "__main__.py" and written_examples(path):
                parts = path.relative_to(ROOT).with_suffix("").parts
                out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return out


def test_pytest_runs_both_packages_doctests():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_config = config["tool"]["pytest"]["ini_options"]
    assert "--doctest-modules" in pytest_config["addopts"].split()
    assert set(PACKAGES) <= set(pytest_config["testpaths"])


@pytest.mark.parametrize(
    "name, path", [pytest.param(n, p, id=n) for n, p in modules_with_examples()]
)
def test_every_written_example_is_one_doctest_finds(name, path):
    module = importlib.import_module(name)
    found = sum(len(t.examples) for t in doctest.DocTestFinder().find(module))
    assert found == written_examples(path), f"{name}: some examples are where doctest never looks"
