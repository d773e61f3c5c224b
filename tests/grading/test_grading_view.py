"""The grading view: no reference implementation is reachable from a graded kernel.

This is the test that keeps the marks (``@reference_for``, :mod:`chipsim.reference`) true
through a redesign of the packages. It runs, under a tracer, everything the grader treats as
a reference (each part's reference strategies, compile's defaults, every registered fusion
pass and memory planner that is not a baseline, the exact answers of the classification and
liveness parts), and an honest solution (the instructor's solution notebook). Every function
the references run and the honest solution never needs must be marked a reference solution
(stubbed in the view) or be one of the known tools below (kept, with a reason). A reference
implementation that moves to another module, or gains a helper, fails here with the names.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

import chipsim
from grader.problems.parts import ASSIGNMENTS, get_part
from grader.sandbox.view import (
    BASELINES,
    NAMED,
    answers,
    build_view,
    module_name,
    package_path,
    reference_sources,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(chipsim.__file__).resolve().parent
GRADER = package_path("grader")
#: The grader's own modules: they compose the references but a kernel never needs them
#: (the grader's epilogue reference aside: it is marked, and traced).
GRADER_SIDE = ("grader.",)

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
    "chipsim.compiler.lowering:program_of": "a partition's whole program, what compile builds",
    "chipsim.codegen.feasibility:stand_in_spec": "a kernel's layout for those two measurements",
    "chipsim.codegen.feasibility:_per_kernel": "the memo shared by those two measurements",
    "chipsim.codegen.blocked:*": "the code generator's blocked kernels (a big matmul's epilogue)",
    "chipsim.codegen.block_sizes:*": "the tile sizes of those blocked kernels (their cost model)",
    "chipsim.passes.fusion.partition:group_outputs": "the values a kernel writes out, a tool",
    "chipsim.passes.placement:place_group": "placement's stand-in layout for measuring a kernel",
    "chipsim.codegen.streaming:stand_in": "the stand-in layout with streamed inputs in DRAM",
    "chipsim.ir.ops.contraction:_conv_geometry": "conv2d's own trait (the op registry's)",
}


def declared(module: str, entries) -> list[str]:
    """The names ``entries`` (``"module:name"``) declare for ``module``."""
    import fnmatch

    return [
        e.partition(":")[2] for e in entries if fnmatch.fnmatchcase(module, e.partition(":")[0])
    ]


def _traced(fn) -> set[tuple[str, str]]:
    """``(module, qualname)`` of every chipsim function ``fn`` runs."""
    seen: set[tuple[str, str]] = set()

    def profile(frame, event, _arg):
        if event == "call":
            code = frame.f_code
            for package in (PACKAGE, GRADER):
                if code.co_filename.startswith(str(package)) and code.co_name != "<module>":
                    rel = os.path.relpath(code.co_filename, package)
                    seen.add((module_name(rel, package.name), code.co_qualname))

    # what a call runs, not what an earlier call left in the compile's memos
    import chipsim.codegen.link as link
    import chipsim.hw.chip as chips

    link.forget()
    chips._READ.clear()
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def _references(assignment: str) -> None:
    from chipsim.compiler import FUSION_PASSES
    from chipsim.hw import get_chip
    from chipsim.ir.ops import Pattern
    from chipsim.passes.fusion import can_fuse, format_rules
    from chipsim.passes.memory import PLANNERS, liveness
    from grader.scoring import checks

    chip = get_chip("edge-npu")
    for pid in ASSIGNMENTS[assignment]:
        part = get_part(pid)
        for inst in part.visible():
            obj = inst.build()
            if inst.kind in ("fusion", "plan", "arena"):
                checks.baseline(pid, inst.id)
            if inst.kind == "fusion":
                chipsim.compile(obj, simplify=False)  # compile's defaults
                for name, fuse in FUSION_PASSES.items():
                    if name not in BASELINES["fusion"]:
                        fuse(obj, chip)
            if inst.kind in ("first_fit", "arena"):
                for name, plan in PLANNERS.items():
                    if name not in BASELINES["memory_planning"]:
                        plan(obj)
            if inst.kind == "liveness":
                graph, order = obj
                liveness(graph, [graph.nodes[i] for i in order])
            if inst.kind == "classify":
                format_rules()
                for p in Pattern:
                    for c in Pattern:
                        checks._always_fuses(can_fuse, p, c)


def _honest(assignment: str) -> None:
    nb = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines += [ln for ln in cell.source.splitlines() if not ln.lstrip().startswith("%")]
    source = "\n".join(lines).replace("HIDDEN = True", "HIDDEN = False")
    exec(compile(source, f"<{assignment} solution>", "exec"), {"__name__": "__solution__"})


@pytest.fixture(scope="module")
def traces():
    import matplotlib

    matplotlib.use("Agg")
    old = os.environ.get("NBGRADER_EXECUTION")
    os.environ["NBGRADER_EXECUTION"] = "autograde"  # no provisional scores (they run references)
    try:
        return {a: (_traced(lambda a=a: _references(a)), _traced(lambda a=a: _honest(a)))
                for a in ASSIGNMENTS}  # fmt: skip
    finally:
        if old is None:
            del os.environ["NBGRADER_EXECUTION"]
        else:
            os.environ["NBGRADER_EXECUTION"] = old


def _covered(module: str, qualname: str, entries) -> bool:
    names = declared(module, entries)
    top = qualname.split(".<locals>")[0]
    return any(n == "*" or top == n or top.startswith(n + ".") for n in names)


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_what_only_the_references_run_is_declared(traces, assignment):
    refs, honest = traces[assignment]
    only = {(m, q) for m, q in refs - honest if not m.startswith(GRADER_SIDE)}
    only |= {(m, q) for m, q in refs - honest if m == "grader.scoring.epilogue"}
    marks = [f"{m}:{n}" for m, names in answers(assignment).items() for n in names]
    entries = (*marks, *TOOLS)
    missing = sorted(f"{m}:{q}" for m, q in only if not _covered(m, q, entries))
    assert not missing, (
        f"these run only for the {assignment} references: mark each @reference_for("
        f"{assignment!r}) where it is defined (or add it to TOOLS here, with a reason): {missing}"
    )


def test_every_assignment_withholds_its_reference_solutions():
    assert set(answers("fusion")) >= {"chipsim.compiler.fusion", "chipsim.passes.fusion.rules",
                                       "grader.scoring.epilogue"}  # fmt: skip
    assert answers("memory_planning")["chipsim.passes.memory.planners"] == (
        "first_fit",
        "greedy_by_size",
        "place_in_order",
        "overlap_lists",
        "_best_offset",
    )
    assert answers("no such exercise") == {}


@pytest.mark.parametrize("assignment", sorted(NAMED))
def test_what_a_notebook_says_is_withheld_is_and_the_notebook_says_all_of_it(assignment):
    """The names the Exercises page lists (:data:`NAMED`) are reference solutions the view
    withholds, and the notebook's "Withheld" paragraph names every one of them, in both
    languages (a learner once found ``search_blocks`` on the page and not in the notebook)."""
    withheld = {qual.rsplit(".", 1)[-1] for qual in reference_sources(assignment)}
    assert set(NAMED[assignment]) <= withheld, set(NAMED[assignment]) - withheld
    for where in ("solutions", "exercises"):
        nb = nbformat.read(ROOT / where / assignment / f"{assignment}.ipynb", as_version=4)
        intro = nb.cells[0].source
        english = intro[intro.index("**Withheld:**") :].split("\n\n")[0]
        chinese = intro[intro.index("**评分时不提供**：") :].split("\n\n")[0]
        for text in (english, chinese):
            named = set(re.findall(r"`(?:[\w.]+\.)?(\w+)`", text))
            assert set(NAMED[assignment]) <= named, (where, set(NAMED[assignment]) - named)


@pytest.mark.parametrize("entry", sorted(TOOLS))
def test_every_declared_name_exists(entry):
    pattern, _, name = entry.partition(":")
    modules = [
        module_name(str(p.relative_to(PACKAGE)))
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts
    ]
    hits = [m for m in modules if __import__("fnmatch").fnmatchcase(m, pattern)]
    assert hits, f"{entry}: no module matches {pattern!r} any more"
    if name != "*":
        obj = importlib.import_module(hits[0])
        for part in name.split("."):
            obj = getattr(obj, part)  # AttributeError: renamed or moved; update view.py


VIEW_PROBE = """
import json, sys, chipsim
from grader.sandbox.view import BASELINES, ReferenceUnavailable
from grader.problems.parts import get_part
from chipsim.hw import get_chip
out = {"file": chipsim.__file__, "raised": [], "ran": [], "compile_none": None}
g = get_part("fusion_chains").instance("chains_a").build()
records = get_part("memory_greedy").instance("random_40").build()
def attempt(label, fn):
    try:
        fn()
        out["ran"].append(label)
    except ReferenceUnavailable:
        out["raised"].append(label)
from chipsim.compiler import FUSION_PASSES
from chipsim.passes.memory import PLANNERS
for name, fuse in FUSION_PASSES.items():
    attempt("fusion:" + name, lambda: fuse(g, get_chip("edge-npu")))
for name, plan in PLANNERS.items():
    attempt("planner:" + name, lambda: plan(records))
attempt("compile default", lambda: chipsim.compile(g, simplify=False))
out["compile_none"] = chipsim.compile(g, fusion=None, planner=None, simplify=False).report.cycles
print(json.dumps(out))
"""


def _in_view(assignment: str, tmp_path: Path, code: str) -> dict:
    for package in (PACKAGE, GRADER):
        build_view(assignment, package, tmp_path / assignment / package.name)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / assignment)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_in_the_fusion_view_no_reference_fusion_runs(tmp_path):
    out = _in_view("fusion", tmp_path, VIEW_PROBE)
    assert out["file"].startswith(str(tmp_path))
    fusion_ran = {r for r in out["ran"] if r.startswith("fusion:")}
    assert fusion_ran == {"fusion:none"}
    assert "compile default" in out["raised"] and out["compile_none"] > 0


def test_in_the_memory_view_no_reference_planner_runs(tmp_path):
    out = _in_view("memory_planning", tmp_path, VIEW_PROBE)
    planners_ran = {r for r in out["ran"] if r.startswith("planner:")}
    assert planners_ran == {"planner:naive"}
    assert "compile default" in out["raised"] and out["compile_none"] > 0


def _bodies(path: Path) -> dict[str, str]:
    """qualname -> the normalised syntax tree of the body, for functions of 3+ statements."""
    out: dict[str, str] = {}

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if len(node.body) >= 3:
                    out[prefix + node.name] = "".join(ast.dump(s) for s in node.body)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(path.read_text()).body, "")
    return out


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_no_reference_code_is_in_the_view(tmp_path, assignment):
    """The implementation is gone from the files, not just unreachable by its name: no
    function of the view has the body of a stubbed reference function (a second copy)."""
    marks = answers(assignment)
    for package in (PACKAGE, GRADER):
        view = build_view(assignment, package, tmp_path / package.name)
        in_view = {b for p in view.rglob("*.py") for b in _bodies(p).values()}
        for path in package.rglob("*.py"):
            module = module_name(path.relative_to(package), package.name)
            names = marks.get(module, ())
            for qual, body in _bodies(path).items() if names else ():
                if any(n == "*" or qual == n or qual.startswith(n + ".") for n in names):
                    assert body not in in_view, f"{module}.{qual} is still in the view"


@pytest.mark.parametrize("assignment", list(ASSIGNMENTS))
def test_the_honest_solution_runs_in_the_view(tmp_path, assignment):
    nb = nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", 4)
    cells = [c.source.replace("HIDDEN = True", "HIDDEN = False") for c in nb.cells
             if c.cell_type == "code"]  # fmt: skip
    code = textwrap.dedent(f"""
        import json, os, matplotlib
        matplotlib.use("Agg")
        os.environ["NBGRADER_EXECUTION"] = "autograde"
        errors = []
        for k, src in enumerate({cells!r}):
            src = "\\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith("%"))
            try:
                exec(src, globals())
            except Exception as e:
                errors.append(f"cell {{k}}: {{type(e).__name__}}: {{e}}")
        print(json.dumps({{"errors": errors}}))
    """)
    assert _in_view(assignment, tmp_path, code) == {"errors": []}
