"""The grading view: the packages as a learner's kernel sees them while it is graded.

An exercise asks for a function the course's packages already have: the reference fusion,
the reference planners, liveness. While a notebook is graded its kernel must not be able to
call them, by any route (an import, ``getattr`` on a computed name, ``sys.modules``, ``gc``,
pickle, a frame's globals, compile's defaults): so the kernel does not *have* them. The
sandbox shows it a copy of each package — chipsim, and this grader, whose own epilogue
reference is one — in which the body of every reference solution of the notebook's
assignment is replaced by ``raise ReferenceUnavailable(...)``; the implementation's code is
not in the kernel's file system at all. Everything else — the IR, the compiler with
``fusion=None`` or the learner's own pass, the simulator, the tools the notebook offers — is
untouched, so honest experiments keep working.

Which functions those are is declared where they are defined (:mod:`chipsim.reference`):
``@reference_for("fusion")`` on a function or method, ``__reference_for__ = (...)`` at the
top of a module all of whose functions are. :func:`answers` reads the marks from the source
files, without importing them, and that one reading drives the view's stubs
(:func:`stub_source`), the test cell's :func:`withheld` block and the copy check's
:func:`reference_sources`: one declaration, one rule, everywhere it must hold.
``tests/grading/test_grading_view.py`` runs every reference under a tracer and fails when
one runs a helper that is neither marked nor a known tool, so a reference that gains a
helper in a redesign cannot leak it.

Example:
    >>> print(stub_source("def fast(x):\\n    return x * 2\\n\\ny = 1\\n", "m", ("fast",)))
    def fast(x):
        from grader.sandbox.view import unavailable; raise unavailable('m.fast')
    <BLANKLINE>
    y = 1
    <BLANKLINE>
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from chipsim.errors import ChipsimError
from chipsim.i18n import tr

#: The packages whose reference solutions are withheld (their marks are read from source).
PACKAGES = ("chipsim", "grader")
#: Registered passes that are baselines, not answers (``compile(fusion=None)``, no reuse).
BASELINES = {"fusion": ("none",), "memory_planning": ("naive",)}
#: The withheld functions each notebook names to its learners, by the name they would call
#: (every one a marked reference solution: ``tests/grading/test_grading_view.py``). The
#: Exercises page lists them from here, and each notebook's "Withheld" paragraph names them.
NAMED = {
    "fusion": ("can_fuse", "fuse_elementwise_chains", "reference_fusion", "rule_fusion",
               "autotune", "fits", "epilogue_fusion"),
    "memory_planning": ("liveness", "first_fit", "greedy_by_size", "search"),
    "instruction_generation": ("generated", "unit_and_cycles", "emit_blocked", "choose_blocks",
                               "search_blocks"),
}  # fmt: skip


class ReferenceUnavailable(ChipsimError):
    """A reference implementation was called in a notebook that is being graded."""


def unavailable(name: str) -> ReferenceUnavailable:
    """The error a withheld reference implementation raises (the stubs call this)."""
    short = name.rsplit(".", 1)[-1]
    return ReferenceUnavailable(
        tr(
            "{short} ({name}) is not available to your solution: it is part of the course's "
            "reference solution to this assignment, so the grader withholds it (and so does "
            "the test cell). Use your own functions instead; chipsim.compile uses the reference "
            "passes by default, so pass them explicitly, e.g. chipsim.compile(graph, "
            "fusion=my_fusion) or fusion=None, planner=my_planner.",
            short=short,
            name=name,
        )
    )


# -- which functions: the marks, read from source ----------------------------------------------
@functools.cache
def answers(assignment: str) -> dict[str, tuple[str, ...]]:
    """``module -> qualnames`` (``("*",)``: every function) of the reference solutions of
    ``assignment``, read from the marks in the packages' source files (never imported)."""
    out: dict[str, tuple[str, ...]] = {}
    for package in map(package_path, PACKAGES):
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                names = marked(path.read_text(encoding="utf-8"), assignment)
                if names:
                    out[module_name(path.relative_to(package), package.name)] = names
    return out


def marked(source: str, assignment: str) -> tuple[str, ...]:
    """The qualnames ``source`` marks as reference solutions of ``assignment``: ``("*",)``
    for a module-level ``__reference_for__`` naming it, else every function or method
    decorated with ``@reference_for(...)`` naming it.

    Example:
        >>> marked("@reference_for('fusion')\\ndef f(): pass\\ndef g(): pass\\n", "fusion")
        ('f',)
        >>> marked("__reference_for__ = ('fusion',)\\ndef g(): pass\\n", "fusion")
        ('*',)
    """
    tree = ast.parse(source)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "__reference_for__" for t in targets):
            if assignment in _strings(node.value):
                return ("*",)
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    if not isinstance(dec, ast.Call):
                        continue
                    name = getattr(dec.func, "id", getattr(dec.func, "attr", ""))
                    if name == "reference_for" and assignment in _strings(*dec.args):
                        found.append(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return tuple(found)


def _strings(*nodes: ast.AST) -> set[str]:
    """The string constants in ``nodes`` (each a tuple or list of them, or one)."""
    out: set[str] = set()
    for node in nodes:
        elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
        out |= {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return out


def package_path(name: str) -> Path:
    """Where the package ``name`` is imported from (its folder)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ChipsimError(f"the package {name!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def module_name(rel: Path | str, package: str = "chipsim") -> str:
    """``passes/fusion/reference.py`` -> ``chipsim.passes.fusion.reference``."""
    parts = [package, *Path(rel).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _covered(qualname: str, names: Iterable[str]) -> bool:
    """Is ``qualname`` (``f``, ``Class.method``) one of ``names`` or inside one of them?"""
    return any(n == "*" or qualname == n or qualname.startswith(n + ".") for n in names)


# -- in a learner's own kernel: the test cell's block -------------------------------------------
@contextlib.contextmanager
def withheld(assignment: str) -> Iterator[None]:
    """Inside the block, every reference solution of ``assignment`` (:func:`answers`) raises
    :class:`ReferenceUnavailable`, as it does in the grading view.

    The test cell runs a learner's functions in this block, so that what it shows on the
    visible instances is what the grader gives on them. Each function's code object is
    swapped for a one-line ``raise`` and put back afterwards: every name bound to the function
    (an earlier ``from ... import greedy_by_size`` too) reaches the stub, exactly as the
    view's stubbed source does. Memoised functions (``functools.cache``) forget what they
    remembered, so nothing computed before the block answers inside it.
    """
    swapped: list[tuple[Any, Any]] = []
    caches = []
    try:
        for module, names in _withheld_modules(assignment):
            for qual, func, cache in _functions(module, names):
                code = _stub_code(func.__code__, f"{module.__name__}.{qual}")
                if code is None:
                    continue
                swapped.append((func, func.__code__))
                func.__code__ = code
                if cache is not None:
                    caches.append(cache)
        for cache in caches:
            cache.cache_clear()
        yield
    finally:
        for func, code in reversed(swapped):
            func.__code__ = code
        for cache in caches:
            cache.cache_clear()


def reference_sources(assignment: str) -> dict[str, str]:
    """The source of every reference solution of ``assignment`` (``"module.qualname" ->
    source``), for the instructor's copy check."""
    out = {}
    for module, names in _withheld_modules(assignment):
        for qual, func, _cache in _functions(module, names):
            try:
                out[f"{module.__name__}.{qual}"] = inspect.getsource(func)
            except (OSError, TypeError):
                continue
    return out


def _withheld_modules(assignment: str) -> Iterator[tuple[Any, tuple[str, ...]]]:
    """The modules with reference solutions of ``assignment``, imported, with their names."""
    for module, names in sorted(answers(assignment).items()):
        yield importlib.import_module(module), names


def _functions(module: Any, names: Sequence[str]) -> Iterator[tuple[str, Any, Any]]:
    """``(qualname, plain function, its cache or None)`` for each function of ``module``
    that ``names`` cover (the same rule as :func:`stub_source`)."""

    def visit(owner: Any, prefix: str) -> Iterator[tuple[str, Any, Any]]:
        for attr, value in list(vars(owner).items()):
            qual = prefix + attr
            cache = value if hasattr(value, "cache_clear") else None
            func = inspect.unwrap(value) if cache is not None else value
            if isinstance(func, (staticmethod, classmethod)):
                func = func.__func__
            if inspect.isfunction(func) and func.__module__ == module.__name__:
                if _covered(qual, names):
                    yield qual, func, cache
            elif inspect.isclass(value) and value.__module__ == module.__name__:
                yield from visit(value, qual + ".")

    yield from visit(module, "")


def _stub_code(code: Any, name: str) -> Any:
    """A code object that raises :func:`unavailable` for ``name``, with the same free
    variables as ``code`` (so it can stand in for it), or None if none can be made."""
    free = code.co_freevars
    lines = ["def _outer():"]
    lines += [f"    {v} = None" for v in free]
    lines += ["    def _stub(*args, **kwargs):"]
    if free:
        lines.append("        (" + ", ".join(free) + ",)")
    lines += [
        "        from grader.sandbox.view import unavailable",
        f"        raise unavailable({name!r})",
        "    return _stub",
    ]
    scope: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<withheld reference>", "exec"), scope)  # noqa: S102
    stub = scope["_outer"]().__code__
    return stub if stub.co_freevars == free else None


# -- in the sandbox: a copy of each package with the stubs --------------------------------------
def stub_source(source: str, module: str, names: Sequence[str]) -> str:
    """``source`` with the body of every function of ``names`` (qualnames, or ``"*"``)
    replaced by a one-line ``raise``; the line numbers of everything else are kept."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    spans: list[tuple[int, int, int, bool, str]] = []  # first body line, last, column, ...

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + node.name
                if _covered(qual, names):
                    first = node.body[0]
                    one_line = first.lineno == node.lineno  # def f(): return 1
                    spans.append((first.lineno, node.end_lineno or first.lineno,
                                  first.col_offset, one_line, qual))  # fmt: skip
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    for first, last, col, one_line, qual in sorted(spans, reverse=True):
        name = f"{module}.{qual}"
        stub = f"from grader.sandbox.view import unavailable; raise unavailable({name!r})\n"
        lines[first - 1] = (lines[first - 1][:col] if one_line else " " * col) + stub
        for k in range(first, last):
            lines[k] = "\n"
    return "".join(lines)


def build_view(assignment: str, package: Path, dest: Path) -> Path:
    """Write the grading view of ``package`` for ``assignment`` into ``dest`` (a new folder)."""
    withheld_here = answers(assignment)
    for src in sorted(package.rglob("*")):
        rel = src.relative_to(package)
        if "__pycache__" in rel.parts or src.is_symlink():
            continue
        out = dest / rel
        if src.is_dir():
            out.mkdir(mode=0o755, parents=True, exist_ok=True)
            continue
        out.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        data = src.read_bytes()
        if src.suffix == ".py":
            module = module_name(rel, package.name)
            if module in withheld_here:
                data = stub_source(data.decode(), module, withheld_here[module]).encode()
        out.write_bytes(data)
        out.chmod(0o644)
    dest.chmod(0o755)
    return dest


@functools.cache
def _views_base() -> Path:
    """This grading process's own folder of views: a fresh, unpredictably named, private
    (0700) temporary folder, removed when the process ends. (A fixed name in the shared temp
    folder could be made first by any local account, and grading would then stop.) Kernels
    see a view through a bind mount made by the sandbox, not through this path."""
    base = Path(tempfile.mkdtemp(prefix="chipsim-views-"))
    atexit.register(shutil.rmtree, base, True)
    return base


@functools.cache
def grading_view(assignment: str) -> tuple[tuple[Path, Path], ...]:
    """``(view, package)`` for each of :data:`PACKAGES`: the grading view of the installed
    package for ``assignment``, and the folder it stands in for (built once per grading
    process, in its private folder of views)."""
    out = []
    for package in map(package_path, PACKAGES):
        digest = hashlib.sha256(repr((assignment, answers(assignment))).encode())
        digest.update(Path(__file__).read_bytes())
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(package)).encode() + path.read_bytes())
        final = _views_base() / f"{assignment}-{package.name}-{digest.hexdigest()[:20]}"
        if not final.exists():
            final.mkdir(mode=0o755)
            build_view(assignment, package, final / package.name)
        out.append((final / package.name, package))
    return tuple(out)
