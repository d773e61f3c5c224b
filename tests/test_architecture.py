"""chipsim's architecture, checked: the layer contracts (import-linter, ``pyproject.toml``),
the few imports that run inside functions (each with the reason it is there), and concepts
with a typed home instead of strings (op traits, memory levels)."""

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


#: The rooms that compile and run graphs: they ask an op's traits, never its name.
ENGINE = ("ir", "frontend", "passes", "hw", "codegen", "runtime", "compiler")
#: Passes about one op by name (folding batch norm is about batch_norm).
OP_NAMED_PASSES = {"chipsim/passes/fold_batchnorm.py"}
#: Where the level names are spelled: the enum, and the chip files' section names.
LEVEL_NAMES_HOME = {"chipsim/target.py", "chipsim/hw/chip.py", "chipsim/calibration/variants.py"}


def _engine_files() -> list[Path]:
    return [p for room in ENGINE for p in sorted((PACKAGE / room).rglob("*.py"))]


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are code, not docstrings."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_engine_asks_an_ops_traits_not_its_name() -> None:
    found = []
    for path in _engine_files():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare) or rel in OP_NAMED_PASSES:
                continue
            sides = [node.left, *node.comparators]
            named = any(isinstance(x, ast.Attribute) and x.attr == "op" for x in sides)
            literal = any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in sides)
            if named and literal:
                found.append(f"{rel}:{node.lineno}")
    assert found == [], "compare an op's trait (is_constant, moves_data, ...), not its name"


def test_memory_levels_are_the_enum_not_strings() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel in LEVEL_NAMES_HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{rel}:{c.lineno}" for c in _code_strings(tree) if c.value in ("dram", "sram", "reg")
        ]
    assert found == [], "use chipsim.target.Level"


def test_passes_are_typed_against_the_chip_protocol() -> None:
    untyped = []
    for path in sorted((PACKAGE / "passes").rglob("*.py")) + [PACKAGE / "compiler" / "fusion.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg == "chip" and ast.unparse(arg.annotation or ast.Constant(None)) in (
                        "Any",
                        "None",
                    ):
                        untyped.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert untyped == []


def test_every_package_says_what_it_exports() -> None:
    import importlib

    for name in _packages():
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        assert exported, f"{name} has no __all__"
        assert [n for n in exported if not hasattr(module, n)] == [], name
        assert len(set(exported)) == len(exported), f"{name}: a name twice in __all__"


def _packages() -> list[str]:
    return [
        ".".join(p.parent.relative_to(ROOT).parts) for p in sorted(PACKAGE.rglob("__init__.py"))
    ]


def test_the_front_door_is_curated() -> None:
    """At most 40 names; the op functions live in chipsim.ops (one per public op)."""
    import chipsim
    import chipsim.ops
    from chipsim.ir import OPS

    assert len(chipsim.__all__) <= 40, len(chipsim.__all__)
    assert "ops" in chipsim.__all__
    assert sorted(chipsim.ops.__all__) == sorted(n for n, d in OPS.items() if d.public)
    assert not set(chipsim.ops.__all__) & set(chipsim.__all__), "an op exported twice"


def test_a_name_exported_is_the_name_defined() -> None:
    """No silent renamings: ``chipsim.chip`` is a function called ``chip``, not ``get_chip``;
    and no package namespace leaks the helpers its code imports (np, functools, typing)."""
    import importlib
    import types

    renamed, leaked = [], []
    for name in _packages():
        module = importlib.import_module(name)
        for exported in module.__all__:
            obj = getattr(module, exported)
            defined = getattr(obj, "__name__", None)
            if isinstance(obj, types.ModuleType):
                defined = obj.__name__.rsplit(".", 1)[-1]
            if isinstance(defined, str) and defined != exported:
                renamed.append(f"{name}.{exported} is {defined}")
        leaked += [
            f"{name}.{n}" for n in ("np", "functools", "Any", "Callable") if hasattr(module, n)
        ]
    assert renamed == []
    assert leaked == []
