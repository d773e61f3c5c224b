"""What the test cell shows is what the grader gives: the reference implementations the grader
withholds are withheld in the test cell too (``grader.sandbox.view.withheld``)."""

from __future__ import annotations

import pytest

from chipsim.ir.ops import Pattern
from chipsim.passes.fusion import Partition
from grader import submit
from grader.sandbox.view import ReferenceUnavailable, answers, unavailable, withheld

GRADER_SAYS = "is not available to your solution"


def _patterns_with(use):
    table = {
        "neg exp log sqrt rsqrt tanh sigmoid relu gelu cast": Pattern.ELEMENTWISE,
        "add sub mul div maximum minimum gt lt ge le eq where broadcast_to": Pattern.BROADCAST,
        "transpose reshape concat slice": Pattern.INJECTIVE,
        "sum max mean softmax layernorm": Pattern.REDUCTION,
        "matmul conv2d": Pattern.CONTRACTION,
        "constant": Pattern.OPAQUE,
    }
    patterns = {op: p for names, p in table.items() for op in names.split()}
    return (lambda op: patterns[op]), use


def _can_fuse(p, c):
    from chipsim.passes.fusion import can_fuse

    return can_fuse(p, c)


def _chains(graph, chip):
    from chipsim.passes.fusion import fuse_elementwise_chains

    return fuse_elementwise_chains(graph, chip)


def _fits_epilogue(graph, chip):
    from chipsim.passes.fusion.capacity import fits

    fits(graph, [0], chip)
    return Partition([[i] for i, n in enumerate(graph.nodes) if n.op != "constant"])


def _compile_default(graph, chip):
    import chipsim

    return chipsim.compile(graph).partition  # compile's default fusion is the reference


def _liveness(graph, schedule):
    from chipsim.passes.memory import liveness

    return liveness(graph, schedule)


def _first_fit(records, alignment=64):
    from chipsim.passes.memory import first_fit

    return first_fit(records, alignment=alignment)


def _greedy(records, alignment=64):
    from chipsim.passes.memory.planners import greedy_by_size

    return greedy_by_size(records, alignment=alignment)


def _search(records, alignment=64):
    from chipsim.passes.memory import get_planner

    return get_planner("search")(records, alignment=alignment)


#: For each tool the grader withholds: a learner's part that calls it.
CASES = {
    "can_fuse": ("fusion_patterns", _patterns_with(_can_fuse)),
    "fuse_elementwise_chains": ("fusion_chains", (_chains,)),
    "fits": ("fusion_epilogue", (_fits_epilogue,)),
    "reference_fusion (compile's default)": ("fusion_challenge", (_compile_default,)),
    "liveness": ("memory_liveness", (_liveness,)),
    "first_fit": ("memory_first_fit", (_first_fit,)),
    "greedy_by_size": ("memory_greedy", (_greedy,)),
    "search": ("memory_challenge", (_search,)),
}


@pytest.mark.parametrize("tool", list(CASES))
def test_the_test_cell_shows_zero_with_the_graders_message(tool):
    part, fns = CASES[tool]
    answer = submit(part, *fns)
    assert answer.provisional.score == 0.0, answer.text()
    text = " ".join(answer.text().split())  # the explanation's lines are wrapped
    assert GRADER_SAYS in text, text
    # the whole message, with what to do instead (it was cut after 300 characters), and
    # where: the learner's own line that called the tool, not the stub that raised
    assert "fusion=None, planner=my_planner." in text, text
    assert f"of {fns[-1].__name__})" in text and "_stub" not in text, text


def test_the_tools_work_again_outside_the_test_cell():
    from chipsim.passes.memory import UsageRecord
    from chipsim.passes.memory.planners import greedy_by_size

    records = [UsageRecord("a", 64, 0, 2)]
    with withheld("memory_planning"):
        with pytest.raises(ReferenceUnavailable, match=GRADER_SAYS):
            greedy_by_size(records)
    assert greedy_by_size(records).arena_size == 64


def test_every_withheld_reference_raises_the_views_own_error():
    """Each marked reference solution raises, inside the block, exactly what the grading view's
    stub raises (one message, one list)."""
    from grader.sandbox.view import _functions, _withheld_modules

    for assignment in ("fusion", "memory_planning"):
        assert answers(assignment)
        funcs = [(m, q, f) for m, names in _withheld_modules(assignment)
                 for q, f, _ in _functions(m, names)]  # fmt: skip
        assert funcs, assignment
        with withheld(assignment):
            for module, qual, func in funcs:
                name = f"{module.__name__}.{qual}"
                with pytest.raises(ReferenceUnavailable) as err:
                    func(*([None] * func.__code__.co_argcount))
                assert str(err.value) == str(unavailable(name)), name


NEW_PLANNER = '''"""A planner added after the grader was written."""

from chipsim.passes.memory.planners import first_fit
from chipsim.reference import reference_for


@reference_for("memory_planning")
def best_of_two(records, alignment=64):
    return first_fit(records, alignment=alignment)


def helper():
    return "a tool, not an answer"
'''

PROBE = """
import json
from chipsim.passes.memory import UsageRecord
from chipsim.passes.memory import best_of_two as new
from pathlib import Path
from grader.sandbox.view import (ReferenceUnavailable, answers, build_view, package_path,
                                 withheld)
out = {"from": str(package_path("chipsim")), "marked": answers("memory_planning").get(
    "chipsim.passes.memory.best_of_two")}
with withheld("memory_planning"):
    try:
        new.best_of_two([UsageRecord("a", 64, 0, 2)])
        out["withheld"] = False
    except ReferenceUnavailable:
        out["withheld"] = True
    out["helper"] = new.helper()
# the grading view built from this chipsim holds no code of it
view = build_view("memory_planning", package_path("chipsim"), Path("view") / "chipsim")
out["view"] = (view / "passes" / "memory" / "best_of_two.py").read_text(encoding="utf-8")
print(json.dumps(out))
"""


def test_a_new_marked_planner_is_withheld_without_touching_the_grader(tmp_path):
    """Adding a reference planner is one module with its mark: the grader reads the mark from
    source (a copy of chipsim with the new module; the grader is the installed one)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from grader.sandbox.view import package_path

    copy = tmp_path / "pkgs" / "chipsim"
    shutil.copytree(package_path("chipsim"), copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "passes" / "memory" / "best_of_two.py").write_text(NEW_PLANNER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "pkgs")}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["from"] == str(copy.resolve())
    assert out["marked"] == ["best_of_two"]
    assert out["withheld"] is True and out["helper"] == "a tool, not an answer"
    stubbed = out["view"]
    assert "first_fit(records" not in stubbed and "raise unavailable(" in stubbed
    assert "a tool, not an answer" in stubbed
