"""The grading view of chipsim: the package as a learner's kernel sees it while it is graded.

An exercise asks for a function the package already has: the reference fusion, the reference
planners, liveness. While a notebook is graded its kernel must not be able to call them, by
any route (an import, ``getattr`` on a computed name, ``sys.modules``, ``gc``, pickle, a frame's
globals, compile's defaults): so the kernel does not *have* them. The sandbox shows it a copy
of the package in which the body of every function listed in :data:`ANSWERS` for the
notebook's assignment is replaced by ``raise ReferenceUnavailable(...)``; the implementation's
code is not in the kernel's file system at all. Everything else — the IR, the compiler with
``fusion=None`` or the learner's own pass, the simulator, the tools the notebook offers — is
untouched, so honest experiments keep working.

:data:`ANSWERS` is the one place that lists the reference implementations; :data:`TOOLS`
lists what the reference passes use that is *not* an answer (and so stays). The test
``tests/grading/test_grading_view.py`` runs every reference pass and every registered
fusion pass and planner, and an honest solution, under a tracer: every chipsim function the
references run and the honest solution never needs must be in one of the two lists — so a
reference implementation that moves or gains a helper (a redesign) fails that test until it
is listed here again.

Example:
    >>> src = "def fast(x):\\n    '''Doc.'''\\n    return x * 2\\n\\ny = 1\\n"
    >>> print(stub_source(src, "m", ("fast",)))
    def fast(x):
        from chipsim.grading.view import unavailable; raise unavailable('m.fast')
    <BLANKLINE>
    <BLANKLINE>
    y = 1
    <BLANKLINE>
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import fnmatch
import functools
import hashlib
import importlib
import inspect
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from chipsim.errors import ChipsimError

#: Per assignment, the reference implementations its notebook asks learners to write, as
#: ``"module:qualname"``: a function, a method (``Class.method``), a whole class, or ``*``
#: (every function and method of the module); the module may be a pattern (``search*``).
ANSWERS: dict[str, tuple[str, ...]] = {
    "fusion": (
        # part 1: the fusion rule (the table's lookups; the op patterns are the IR's own)
        "chipsim.passes.fusion.rules:*",
        # part 2: elementwise chains; part 4: the reference fusion, compile's default
        "chipsim.passes.fusion.reference:fuse_elementwise_chains",
        "chipsim.compiler.fusion:reference_fusion",
        "chipsim.passes.fusion.reference:rule_fusion",
        "chipsim.passes.fusion.reference:estimate_fits",
        "chipsim.passes.fusion.reference:immediate_post_dominators",
        "chipsim.passes.fusion.reference:users_of",
        "chipsim.passes.fusion.reference:topological_groups",
        "chipsim.passes.fusion.reference:_pattern",
        "chipsim.passes.fusion.reference:_as_partition",
        "chipsim.passes.fusion.search:*",
        "chipsim.passes.fusion.cost:*",
        # part 3: epilogue fusion within the SRAM budget
        "chipsim.passes.fusion.capacity:fits",
        "chipsim.grading.epilogue:*",
    ),
    "memory_planning": (
        # part 1: liveness
        "chipsim.passes.memory.liveness:liveness",
        "chipsim.passes.memory.liveness:_check_schedule",
        "chipsim.passes.memory.liveness:_record_ids",
        # part 2: first fit; part 3: greedy by size (compile's default planner)
        "chipsim.passes.memory.planners:first_fit",
        "chipsim.passes.memory.planners:greedy_by_size",
        "chipsim.passes.memory.planners:place_in_order",
        "chipsim.passes.memory.planners:overlap_lists",
        "chipsim.passes.memory.planners:_best_offset",
        # part 4: the search planner beats the reference
        "chipsim.passes.memory.search*:*",
    ),
}

#: What the reference passes run that is not an answer, so it stays in the view (and why).
TOOLS: dict[str, str] = {
    "chipsim.passes.memory.planners:naive": "the no-reuse baseline (compile's planner=None)",
    "chipsim.passes.memory.plan:make_plan": "builds a MemoryPlan from offsets, as learners do",
    "chipsim.passes.fusion.capacity:max_tile_rows": "a tool the fusion notebook offers",
    "chipsim.hw.simulator:Simulator.cycles": "the simulator's clock",
    "chipsim.hw.simulator:Simulator.warm": "an L2's state before a kernel is timed alone",
    "chipsim.codegen.feasibility:kernel_fits": "the code generator's capacity rule, a tool",
    "chipsim.codegen.feasibility:grid_dependency": "the GPU rule inside kernel_fits, a tool",
    "chipsim.codegen.feasibility:kernel_timer": "compile's kernel timer, like compile + simulate",
    "chipsim.codegen.feasibility:stand_in_spec": "a kernel's layout for those two measurements",
    "chipsim.codegen.feasibility:_per_kernel": "the memo shared by those two measurements",
    "chipsim.codegen.blocked:*": "the code generator's blocked kernels (a big matmul's epilogue)",
    "chipsim.codegen.block_sizes:*": "the tile sizes of those blocked kernels (their cost model)",
    "chipsim.passes.fusion.partition:group_outputs": "the values a kernel writes out, a tool",
    "chipsim.passes.placement:place_group": "placement's stand-in layout for measuring a kernel",
    "chipsim.codegen.streaming:stand_in": "the stand-in layout with streamed inputs in DRAM",
    "chipsim.ir.ops.contraction:_conv_geometry": "conv2d's own trait (the op registry's)",
}

#: Registered passes that are baselines, not answers (``compile(fusion=None)``, no reuse).
BASELINES = {"fusion": ("none",), "memory_planning": ("naive",)}


class ReferenceUnavailable(ChipsimError):
    """A reference implementation was called in a notebook that is being graded."""


def unavailable(name: str) -> ReferenceUnavailable:
    """The error a withheld reference implementation raises (the stubs call this)."""
    short = name.rsplit(".", 1)[-1]
    return ReferenceUnavailable(
        f"{short} ({name}) is not available to your solution: it is part of the course's "
        "reference solution to this assignment, so the grader withholds it (and so does the "
        "test cell). Use your own functions instead; chipsim.compile uses the reference "
        "passes by default, so pass them explicitly, e.g. chipsim.compile(graph, "
        "fusion=my_fusion) or fusion=None, planner=my_planner."
    )


@contextlib.contextmanager
def withheld(assignment: str) -> Iterator[None]:
    """Inside the block, every reference implementation :data:`ANSWERS` lists for
    ``assignment`` raises :class:`ReferenceUnavailable`, as it does in the grading view.

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
    """The source of every reference implementation :data:`ANSWERS` lists for
    ``assignment`` (``"module.qualname" -> source``), for the instructor's copy check."""
    out = {}
    for module, names in _withheld_modules(assignment):
        for qual, func, _cache in _functions(module, names):
            try:
                out[f"{module.__name__}.{qual}"] = inspect.getsource(func)
            except (OSError, TypeError):
                continue
    return out


def _withheld_modules(assignment: str) -> Iterator[tuple[Any, list[str]]]:
    """The imported modules :data:`ANSWERS` names for ``assignment``, with their entries."""
    from chipsim.grading.sandbox import package_dir

    entries = ANSWERS.get(assignment, ())
    package = package_dir()
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        name = module_name(str(path.relative_to(package)))
        names = declared(name, entries)
        if names:
            yield importlib.import_module(name), names


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
        "        from chipsim.grading.view import unavailable",
        f"        raise unavailable({name!r})",
        "    return _stub",
    ]
    scope: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<withheld reference>", "exec"), scope)  # noqa: S102
    stub = scope["_outer"]().__code__
    return stub if stub.co_freevars == free else None


def _covered(qualname: str, names: Iterable[str]) -> bool:
    """Is ``qualname`` (``f``, ``Class.method``) one of ``names`` or inside one of them?"""
    return any(n == "*" or qualname == n or qualname.startswith(n + ".") for n in names)


def declared(module: str, entries: Iterable[str]) -> list[str]:
    """The names ``entries`` (``"module:name"``) declare for ``module``."""
    return [
        e.partition(":")[2] for e in entries if fnmatch.fnmatchcase(module, e.partition(":")[0])
    ]


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
        stub = f"from chipsim.grading.view import unavailable; raise unavailable({name!r})\n"
        lines[first - 1] = (lines[first - 1][:col] if one_line else " " * col) + stub
        for k in range(first, last):
            lines[k] = "\n"
    return "".join(lines)


def module_name(rel: str) -> str:
    """``passes/fusion/reference.py`` -> ``chipsim.passes.fusion.reference``."""
    parts = ["chipsim", *Path(rel).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def build_view(assignment: str, package: Path, dest: Path) -> Path:
    """Write the grading view of ``package`` for ``assignment`` into ``dest`` (a new folder)."""
    entries = ANSWERS.get(assignment, ())
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
            module = module_name(str(rel))
            mine = declared(module, entries)
            if mine:
                data = stub_source(data.decode(), module, mine).encode()
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
def grading_view(assignment: str) -> Path:
    """The grading view of the installed package for ``assignment`` (built once per grading
    process, in its private folder of views)."""
    from chipsim.grading.sandbox import package_dir

    package = package_dir()
    digest = hashlib.sha256(repr((assignment, ANSWERS.get(assignment))).encode())
    digest.update(Path(__file__).read_bytes())
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(package)).encode() + path.read_bytes())
    final = _views_base() / f"{assignment}-{digest.hexdigest()[:20]}"
    if not final.exists():
        final.mkdir(mode=0o755)
        build_view(assignment, package, final / "chipsim")
    return final / "chipsim"
