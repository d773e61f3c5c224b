"""Static checks of a learner's cells: flags for the instructor, never a score.

Grading does not depend on this scan: the kernel that runs a notebook simply has no reference
pass to call (:mod:`grader.sandbox.view`) and no other learner's file to read
(:mod:`grader.sandbox.modes`). The scan reads (never runs) the code cells a learner could
edit and lists what an instructor may want to look at, in ``gradebook/flags.csv``
(:func:`instructor_flags`):

* an import of a module that reaches *around* the rules (:data:`REACHING_MODULES`: importlib,
  ctypes, gc, pickle, the grader's own modules, ...) — any other import is fine: learners may
  import what they like;
* a name or attribute of the package's reference passes (:data:`FORBIDDEN_NAMES`), or an
  attribute that reaches inside objects (``__globals__``, ``passes``, ...; the everyday
  dunders of :data:`HARMLESS_DUNDERS` such as ``super().__init__`` are fine);
* the dynamic tools that could reach them by a computed name: ``eval``, ``exec``,
  ``__import__``, ``globals``, ``vars``, ``locals``, ``getattr``/``setattr`` with a name that
  is not a literal, and IPython magics or shell commands (``%time``/``%timeit``/
  ``%matplotlib`` are fine);
* ``compile(...)`` asked for a reference pass by name (``fusion="reference"``);
* a solution whose answers equal the reference's on every hidden instance *and* whose code is
  the reference implementation's, token for token up to names
  (:func:`~grader.course.copies.copied_from`): a copy of the course's own answer, pasted from
  the package's source.

A name the learner defines (``def first_fit(...)``) is theirs to use. Each part may name more
(:attr:`Part.forbidden`, e.g. ``get_op`` in the part that asks for op patterns); those are
checked in the cells the part's test cell *reaches* through the names it uses.

Example:
    >>> [v.what for v in check_cells([(0, "from chipsim.passes.fusion import reference_fusion")],
    ...                              assignment="fusion")]
    ["imports 'reference_fusion' from chipsim.passes.fusion, a reference pass: write your own"]
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Modules whose import reaches around the rules (a reference pass by a computed name, the
#: grader's state, another process): flagged. Every other import is the learner's business.
REACHING_MODULES = frozenset(
    {"importlib", "ctypes", "gc", "inspect", "pickle", "marshal", "builtins", "runpy", "code",
     "subprocess", "os", "shutil", "socket", "multiprocessing", "threading", "signal", "pty",
     "grader.sandbox.view", "grader.scoring.checks", "grader.scoring.references",
     "grader.scoring.equivalence", "grader.scoring.diagnosis", "grader.problems.hidden",
     "grader.problems.parts", "grader.problems.part", "grader.problems.families",
     "grader.problems.kernels", "grader.scoring.epilogue",
     "grader.course.rescore", "grader.problems.data"}
)  # fmt: skip

#: The package's reference passes and registries: the answers, not tools.
FORBIDDEN_NAMES = frozenset(
    {
        "reference_fusion", "fuse_elementwise_chains", "no_fusion", "get_fusion",
        "FUSION_PASSES", "immediate_post_dominators", "all_partitions", "greedy_by_size",
        "first_fit", "search", "naive", "get_planner", "PLANNERS", "plan_memory", "liveness",
        "records_from_uses", "kernel_records", "place_in_order", "topological_groups",
        "fits", "checks", "baseline", "fusion_strategy", "plan_strategy", "rule_fusion",
        "autotune", "estimate_fits", "CostSearch", "generated", "unit_and_cycles",
        "emit_blocked", "choose_blocks", "search_blocks", "estimate_cycles", "compute_instrs",
        "run_strategy",
    }
)  # fmt: skip
#: Attributes that reach inside modules and objects.
FORBIDDEN_ATTRS = frozenset(
    {"passes", "grading", "compiler", "modules", "_getframe", "f_globals", "f_back", "gi_frame"}
)
#: Builtins that could reach anything by a computed name.
DYNAMIC = frozenset({"eval", "exec", "__import__", "globals", "vars", "locals", "breakpoint"})
#: The keyword of ``compile(...)`` that names a reference pass, per assignment.
COMPILE_KEYWORD = {"fusion": "fusion", "memory_planning": "planner"}
#: Dunder attributes every Python programmer uses (``super().__init__``, ``type(x).__name__``).
HARMLESS_DUNDERS = frozenset(
    "__init__ __name__ __qualname__ __doc__ __repr__ __str__ __len__ __eq__ __ne__ __lt__ "
    "__le__ __gt__ __ge__ __hash__ __iter__ __next__ __getitem__ __setitem__ __contains__ "
    "__call__ __enter__ __exit__ __post_init__ __class__ __module__ __add__ __mul__".split()
)
#: IPython magics that only time or plot.
HARMLESS_MAGICS = ("%time ", "%timeit ", "%%time", "%%timeit", "%matplotlib")


@dataclass(frozen=True, slots=True)
class Violation:
    """One finding: the cell (index in the notebook), the line in it, and what is wrong."""

    cell: int
    line: int
    what: str

    def __str__(self) -> str:
        return f"cell {self.cell}, line {self.line}: {self.what}"


def parse(source: str) -> ast.Module | None:
    """The cell's syntax tree (magic and shell lines blanked), or None if it does not parse."""
    magic = magic_lines(source)
    lines = ["pass" if n in magic else line for n, line in enumerate(source.splitlines(), 1)]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None  # the cell fails when it runs; it defines nothing a part could use


def magic_lines(source: str) -> set[int]:
    """The (1-based) lines of ``source`` that are IPython magics or shell commands: none when
    the cell is plain Python (a docstring line ending in ``?`` or starting with ``%`` is text,
    not a help request), else the lines that look like one."""
    try:
        ast.parse(source)
    except SyntaxError:
        return {n for n, line in enumerate(source.splitlines(), 1) if _is_magic(line)}
    return set()


def _is_magic(line: str) -> bool:
    s = line.lstrip()
    return s.startswith(("%", "!")) or (s.endswith("?") and not s.startswith("#"))


def _harmless_magic(line: str) -> bool:
    return (line.lstrip() + " ").startswith(HARMLESS_MAGICS)


def defined_names(tree: ast.AST, imports: bool = True) -> set[str]:
    """Names a cell binds at any level (functions, classes, assignments, args, and imports
    unless ``imports`` is false)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and imports:
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a cell binds at module level (what other cells can see): not function locals."""
    out: set[str] = set()
    for stmt in tree.body:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                if not isinstance(node, ast.Lambda):
                    out.add(node.name)
                continue  # its body is local: ast.walk still visits it, filtered below
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out - _local_names(tree)


def _local_names(tree: ast.Module) -> set[str]:
    """Names bound only inside function bodies (and comprehensions) of the cell."""
    inner: set[str] = set()
    outer: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    inner.add(node.id)
        else:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    outer.add(node.id)
    return inner - outer


def used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def check_cells(
    cells: Sequence[tuple[int, str]], *, assignment: str, extra: Iterable[str] = ()
) -> list[Violation]:
    """Violations of the notebook-wide rules (plus ``extra`` forbidden names) in ``cells``.

    Args:
        cells: ``(cell index, source)`` of every code cell the learner could edit.
        assignment: ``"fusion"`` or ``"memory_planning"`` (which ``compile`` keyword to check).
        extra: more forbidden names (a part's own rule).
    """
    trees = [(i, parse(src), src) for i, src in cells]
    # names the learner defines are theirs (an import of a reference pass defines nothing)
    mine = set().union(*(defined_names(t, imports=False) for _, t, _ in trees if t is not None))
    forbidden = (FORBIDDEN_NAMES | set(extra)) - (mine - set(extra))
    out: list[Violation] = []
    for i, tree, src in trees:
        lines = src.splitlines()
        for n in sorted(magic_lines(src)):
            if not _harmless_magic(lines[n - 1]):
                out.append(Violation(i, n, "IPython magics and shell commands are not allowed"))
        if tree is not None:
            out += _check_tree(i, tree, forbidden, set(extra), assignment)
    return out


def _check_tree(
    cell: int, tree: ast.AST, forbidden: set[str], extra: set[str], assignment: str
) -> list[Violation]:
    out: list[Violation] = []

    def bad(node: ast.AST, what: str) -> None:
        out.append(Violation(cell, getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _reaching(a.name):
                    bad(node, f"imports {a.name}, which reaches around the grading rules")
        elif isinstance(node, ast.ImportFrom):
            mod = "." * node.level + (node.module or "")
            for a in node.names:
                if _reaching(mod) or _reaching(f"{mod}.{a.name}"):
                    bad(node, f"imports {a.name!r} from {mod}, which reaches around the rules")
                elif a.name in extra:
                    bad(node, f"imports {a.name!r} from {mod}: this part asks you to write it")
                elif a.name in forbidden:
                    bad(node, f"imports {a.name!r} from {mod}, a reference pass: write your own")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in extra:
                bad(node, f"uses {node.id!r}, which this part asks you to write yourself")
            elif node.id in forbidden:
                bad(node, f"uses {node.id!r}, a reference pass: write your own")
            elif node.id in DYNAMIC:
                bad(node, f"uses {node.id}(), which could reach anything by a computed name")
        elif isinstance(node, ast.Attribute):
            if node.attr in forbidden or node.attr in FORBIDDEN_ATTRS:
                bad(node, f"reaches .{node.attr}, which is not allowed in a solution")
            elif node.attr.startswith("__") and node.attr.endswith("__"):
                if node.attr not in HARMLESS_DUNDERS:
                    bad(node, f"reaches .{node.attr}, which is not allowed in a solution")
        elif isinstance(node, ast.Call):
            out += _check_call(cell, node, forbidden, assignment)
    return out


def _reaching(module: str) -> bool:
    """Is ``module`` (or a package it is in) one of :data:`REACHING_MODULES`?"""
    parts = module.split(".")
    return any(".".join(parts[:k]) in REACHING_MODULES for k in range(1, len(parts) + 1))


def _check_call(cell: int, node: ast.Call, forbidden: set[str], assignment: str) -> list[Violation]:
    out: list[Violation] = []
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if name in ("getattr", "setattr", "delattr", "hasattr") and len(node.args) >= 2:
        key = node.args[1]
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            out.append(Violation(cell, node.lineno, f"{name}() with a computed attribute name"))
        elif key.value in forbidden or (
            key.value.startswith("__") and key.value not in HARMLESS_DUNDERS
        ):
            out.append(Violation(cell, node.lineno, f"{name}() reaches {key.value!r}"))
    if name == "compile" and assignment in COMPILE_KEYWORD:
        word = COMPILE_KEYWORD[assignment]
        value = {k.arg: k.value for k in node.keywords}.get(word)
        named = isinstance(value, ast.Constant) and isinstance(value.value, str)
        if named and value.value.lower() not in ("none", "naive"):
            out.append(
                Violation(
                    cell,
                    node.lineno,
                    f"compile(..., {word}={value.value!r}) asks for a reference pass by name",
                )
            )
    return out


def test_names(tree: ast.Module | None) -> set[str]:
    """The names a test cell takes from the notebook: those it uses and does not define
    itself (``HIDDEN``, which every test cell sets, links none of them)."""
    if tree is None:
        return set()
    return used_names(tree) - defined_names(tree)


def reached_cells(start: Iterable[str], cells: Sequence[tuple[int, str]]) -> list[tuple[int, str]]:
    """The code that defines the names in ``start``, and the code that code uses, transitively:
    ``(cell index, source)`` of each cell with such code, its source holding only the
    top-level statements reached (the others blank, so line numbers stay the cell's). A
    cell's other functions are not part of it: an import that only one function of a cell
    uses is that function's part's, not every part's whose code shares the cell."""
    units = []  # (cell, first line, last line, names it binds, names it uses)
    for i, src in cells:
        tree = parse(src)
        if tree is None:
            continue
        for stmt in tree.body:
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
            # Only module-level names link statements: a loop variable ``i`` in one function
            # does not make another cell's ``i`` part of the solution.
            binds = top_level_names(ast.Module(body=[stmt], type_ignores=[]))
            units.append((i, first, stmt.end_lineno or first, binds, used_names(stmt)))
    wanted, seen = set(start), set()
    changed = True
    while changed:
        changed = False
        for k, (_i, _first, _last, binds, uses) in enumerate(units):
            if k not in seen and binds & wanted:
                seen.add(k)
                wanted |= uses
                changed = True
    kept: dict[int, set[int]] = {}
    for k in seen:
        i, first, last = units[k][:3]
        kept.setdefault(i, set()).update(range(first, last + 1))
    sources = dict(cells)

    def only(i: int, lines: set[int]) -> str:
        """Cell ``i`` with the lines outside ``lines`` blanked (line numbers stay)."""
        return "\n".join(
            line if n in lines else "" for n, line in enumerate(sources[i].splitlines(), 1)
        )

    return [(i, only(i, lines)) for i, lines in sorted(kept.items())]


@dataclass(frozen=True, slots=True)
class Flag:
    """A finding for the instructor: the part whose code it is in (``""``: no part's), where."""

    part: str
    cell: int
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.part or 'no part'}: cell {self.cell}, line {self.line}: {self.what}"


def instructor_flags(
    editable: Sequence[tuple[int, str]],
    tests: dict[str, str],
    *,
    assignment: str,
    forbidden: dict[str, Iterable[str]] | None = None,
) -> list[Flag]:
    """Every finding in ``editable`` cells, each with the part whose test cell reaches it.

    Args:
        editable: ``(cell index, source)`` of the cells the learner could edit.
        tests: part id -> the source of its test cell.
        assignment: ``"fusion"`` or ``"memory_planning"``.
        forbidden: part id -> more names that part forbids.
    """
    out: list[Flag] = []
    for part, source in tests.items():
        tree = parse(source)
        reached = reached_cells(test_names(tree), editable)
        extra = (forbidden or {}).get(part, ())
        found = check_cells(reached, assignment=assignment, extra=extra)
        out += [Flag(part, v.cell, v.line, v.what) for v in found]
    told = {(f.cell, f.line, f.what) for f in out}
    rest = [
        v
        for v in check_cells(editable, assignment=assignment)
        if (v.cell, v.line, v.what) not in told
    ]
    return out + [Flag("", v.cell, v.line, v.what) for v in rest]
