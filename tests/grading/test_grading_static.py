"""The static checks (flags for the instructor): allow-list, forbidden names, reach, and the
package snapshot."""

from __future__ import annotations

from grader.course.static_check import check_cells, instructor_flags, reached_cells
from grader.sandbox.manifest import Snapshot


def whats(src: str, assignment: str = "fusion", extra=()) -> list[str]:
    return [v.what for v in check_cells([(0, src)], assignment=assignment, extra=extra)]


def test_honest_code_passes():
    src = (
        "import numpy as np\nimport warnings, sys\n"
        "from chipsim.passes.fusion import Partition, working_set_bytes\n"
        "import chipsim\n"
        "def first_fit(records):\n    return records\n"
        "first_fit([])\n"
        "p = chipsim.compile(g, fusion=lambda g, c: Partition([]))\n"
        "print('x', file=sys.stderr)\n"
    )
    assert whats(src) == []


def test_reference_passes_and_dynamic_tricks_are_found():
    cases = {
        "from chipsim.passes.fusion import reference_fusion": "a reference pass",
        "import chipsim.passes.fusion as f\nf.reference_fusion": ".reference_fusion",
        "import chipsim\nchipsim.passes.fusion.no_fusion": ".passes",
        "import importlib": "reaches around",
        "from grader.scoring.checks import baseline": "reaches around",
        "x = __import__('chipsim')": "__import__",
        "getattr(m, name)": "computed attribute",
        "getattr(m, 'greedy_by_size')": "greedy_by_size",
        "eval('1')": "eval",
        "x.__dict__": "__dict__",
        "import sys\nsys.modules['chipsim']": ".modules",
        "chipsim.compile(g, fusion='reference')": "fusion='reference'",
        "!pip install x": "magics",
    }
    for src, needle in cases.items():
        found = whats(src)
        assert any(needle in w for w in found), (src, found)


def test_memory_notebook_checks_the_planner_keyword():
    assert whats("chipsim.compile(g, fusion=None, planner=mine)", "memory_planning") == []
    assert whats("chipsim.compile(g, planner='search')", "memory_planning")


def test_what_honest_learners_write_raises_no_flag():
    """The cases that zeroed honest learners' parts before the sandbox made the scan a flag."""
    honest = {
        "class P:\n    def __init__(self):\n        super().__init__()\n"
        "    def name(self):\n        return type(self).__name__\n": "fusion",
        "p = chipsim.compile(g, fusion=None)\nq = chipsim.compile(g)\n": "memory_planning",
        "p = chipsim.compile(g, fusion=None, planner=None)\n": "memory_planning",
        "%time run(g)\n%timeit -n 3 run(g)\n": "fusion",
        "%%time\nrun(g)\n": "fusion",
        "from IPython.display import display\ndisplay(p)\n": "fusion",
        # following the notebook's own advice, and importing what one likes
        "from chipsim.i18n import set_language\nset_language('zh_CN')\n": "fusion",
        "import scipy\nfrom pandas import DataFrame\nimport json, re\n": "memory_planning",
        "from chipsim.passes.memory import live_bytes\nfrom chipsim.hw import get_chip\n": "fusion",
    }
    for src, assignment in honest.items():
        assert whats(src, assignment) == [], src


def test_instructor_flags_name_the_part_whose_code_it_is():
    cells = [
        (3, "from chipsim.ir import get_op\ndef pattern_of(op):\n    return get_op(op).pattern"),
        (9, "import importlib\nx = 1"),
    ]
    tests = {"fusion_patterns": "submit('fusion_patterns', pattern_of, may_fuse)"}
    flags = instructor_flags(
        cells, tests, assignment="fusion", forbidden={"fusion_patterns": ("get_op",)}
    )
    assert {(f.part, f.cell) for f in flags} == {("fusion_patterns", 3), ("", 9)}
    assert "no part: cell 9" in str(flags[-1])


def test_part_rules_apply_to_reached_cells_only():
    cells = [
        (1, "from chipsim.ir import get_op\ndef helper(op):\n    return get_op(op).pattern"),
        (2, "def pattern_of(op):\n    return helper(op)"),
        (3, "def unrelated():\n    return 1"),
    ]
    reached = reached_cells({"pattern_of"}, cells)
    assert [i for i, _ in reached] == [1, 2]
    found = check_cells(reached, assignment="fusion", extra=("get_op",))
    assert {v.cell for v in found} == {1}
    assert check_cells([cells[2]], assignment="fusion", extra=("get_op",)) == []


def test_a_flag_goes_to_the_part_whose_function_uses_it_not_to_every_part_in_its_cell():
    """A learner imported a reference pass for ``fuse_chains`` in the cell that also defines
    ``fuse_epilogues`` and ``my_fusion``: the flag was listed under all three parts."""
    cells = [
        (9, "from chipsim.passes.fusion import fuse_elementwise_chains\n"
            "\n"
            "def fuse_chains(graph, chip):\n"
            "    return fuse_elementwise_chains(graph, chip)\n"
            "\n"
            "def shared(graph):\n"
            "    return graph\n"
            "\n"
            "def fuse_epilogues(graph, chip):\n"
            "    return shared(graph)\n"),
        (11, "def my_fusion(graph, chip):\n    return fuse_epilogues(graph, chip)\n"),
    ]  # fmt: skip
    tests = {
        "fusion_chains": "submit('fusion_chains', fuse_chains)",
        "fusion_epilogue": "submit('fusion_epilogue', fuse_epilogues)",
        "fusion_challenge": "submit('fusion_challenge', my_fusion)",
    }
    flags = instructor_flags(cells, tests, assignment="fusion")
    assert {f.part for f in flags} == {"fusion_chains"}, [str(f) for f in flags]
    assert {f.line for f in flags} == {1, 4}  # the import and the call, in the cell's lines
    reached = reached_cells({"my_fusion"}, cells)
    assert [i for i, _ in reached] == [9, 11]
    assert "def shared" in reached[0][1] and "fuse_elementwise_chains" not in reached[0][1]


def test_snapshot_notices_changes_and_restores(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("A = 1\n")
    (pkg / "sub" / "b.py").write_text("B = 2\n")
    snap = Snapshot.take(pkg)
    assert snap.changed() == [] and len(snap.manifest()) == 2
    (pkg / "a.py").write_text("A = 666\n")
    (pkg / "evil.py").write_text("import os\n")
    assert snap.changed() == ["a.py", "evil.py"]
    assert snap.restore() == ["a.py", "evil.py"]
    assert (pkg / "a.py").read_text() == "A = 1\n" and not (pkg / "evil.py").exists()
    assert snap.changed() == []


def test_a_pasted_reference_is_flagged_an_honest_solution_is_not():
    """The copy flag: answers equal to the reference's on every hidden instance *and* code that
    is the reference implementation with other names. The course's own model solution (the
    same algorithm, written out) is not flagged."""
    import inspect

    from chipsim.passes.memory import planners
    from grader.course.rescore import copy_flags
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import PartScore
    from grader.scoring.spread import ROOT

    same = PartScore(
        "memory_greedy", 3.0,
        tuple(InstanceScore(f"h{k}", 1.0, "", matches_reference=True) for k in range(3)),
        counted=("h0", "h1", "h2"),
    )  # fmt: skip
    pasted = (
        inspect.getsource(planners.place_in_order)
        .replace("place_in_order", "my_place")
        .replace("records", "recs")
    )
    test = "submit('memory_greedy', greedy_plan, hidden=HIDDEN)"
    cells = [(4, pasted + "\n\ndef greedy_plan(recs, alignment=64):\n    return my_place(recs)\n")]
    flags = copy_flags(same, "memory_planning", cells, test)
    assert len(flags) == 1 and "place_in_order" in flags[0].what and flags[0].cell == 4
    import nbformat

    nb = nbformat.read(ROOT / "solutions" / "memory_planning" / "memory_planning.ipynb", 4)
    honest = [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    assert copy_flags(same, "memory_planning", honest, test) == []
    differs = PartScore("memory_greedy", 3.0, (InstanceScore("h0", 1.0, ""),), counted=("h0",))
    assert copy_flags(differs, "memory_planning", cells, test) == []
