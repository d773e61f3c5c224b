"""chipsim's architecture, checked: the layer contracts (import-linter, ``pyproject.toml``)
and the few imports that run inside functions, each with the reason it is there."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "chipsim"
#: The budget of function-local imports of chipsim inside chipsim (issue 22: fewer than 20).
MAX_LOCAL_IMPORTS = 19


def local_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of chipsim inside a function of ``path``."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
            )
            if in_function and isinstance(child, ast.ImportFrom):
                if child.level or (child.module or "").split(".")[0] == "chipsim":
                    found.append((child.lineno, "." * child.level + (child.module or "")))
            elif in_function and isinstance(child, ast.Import):
                found.extend(
                    (child.lineno, a.name) for a in child.names if a.name.startswith("chipsim")
                )
            visit(child, inside)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


def test_the_layer_contracts_hold() -> None:
    lint_imports = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_few_function_local_imports_each_with_its_reason() -> None:
    imports = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, module in local_imports(path):
            reason = "#" in lines[line - 1] or lines[line - 2].strip().startswith("#")
            imports.append((path.relative_to(ROOT), line, module, reason))
    assert len(imports) <= MAX_LOCAL_IMPORTS, imports
    assert [i for i in imports if not i[3]] == [], "a function-local import without a # reason"


def test_the_counter_sees_function_local_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import chipsim\n\ndef f():\n    from chipsim.ir import Graph\n    import numpy\n"
        "    return lambda: __import__('x')\n\nclass C:\n    def g(self):\n"
        "        from . import sibling\n",
        encoding="utf-8",
    )
    assert local_imports(source) == [(4, "chipsim.ir"), (10, ".")]
