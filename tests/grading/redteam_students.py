"""The red-team and honest submissions, as cell-source replacements.

Each attack replaces one part's solution cell (or edits the notebook) and should cost that
part only. ``students(released, solution, course)`` gives name -> (fusion notebook, losses);
``memory_students(released, solution)`` the same for the memory-planning notebook.
"""

from __future__ import annotations

import nbformat
from grading_course import mix

#: The points of every fusion part (full marks).
FULL = {
    "fusion_patterns": 2.0,
    "fusion_chains": 3.0,
    "fusion_epilogue": 3.0,
    "fusion_challenge": 4.0,
}

STUB_PATTERNS = """
def pattern_of(op):
    raise NotImplementedError("pattern_of")


def may_fuse(producer, consumer):
    raise NotImplementedError("may_fuse")


print("fusion_patterns: 2 / 2 points")  # a fake score, printed ...
2.0  # ... and returned
"""

MONKEY_SIM = """
import chipsim

_real_compile = chipsim.compile


def _flattering_compile(graph, **kw):  # monkeypatch the simulator's entry point
    program = _real_compile(graph, **kw)
    print("pretend cycles:", program.report.cycles // 100)
    return program


chipsim.compile = _flattering_compile


def my_fusion(graph, chip):  # no fusion at all: as slow as the naive baseline
    return as_partition(graph, [[i] for i, n in enumerate(graph.nodes) if n.op != "constant"])
"""

PATCH_REFERENCE = (
    "\nchipsim.passes.fusion.fuse_elementwise_chains = fuse_chains  # patch the reference\n"
)
PATCH_GRADING = "\nimport grader\ngrader.score_answer = lambda *a, **k: 3.0  # patch the grader\n"

GETATTR_REF = """
import chipsim


def my_fusion(graph, chip):
    fusion = getattr(chipsim, "compil" + "er").fusion  # reach the reference by a computed name
    return fusion.reference_fusion(graph, chip)
"""

IMPORTLIB_REF = """
import importlib


def my_fusion(graph, chip):
    return importlib.import_module("chipsim.compiler.fusion").reference_fusion(graph, chip)
"""

OVERWRITE_SUBMIT = """
_real_submit = submit


def submit(part, *fns, hidden=False):  # overwrite the test helper for one part
    if part == "fusion_chains":
        return 3.0
    return _real_submit(part, *fns, hidden=hidden)
"""

FORGED_OTHER_GRAPH = """
class Forged:
    def __init__(self, part, ids):
        self.doc = {"format": "chipsim.answer", "version": 1, "part": part,
                    "answers": {i: {"graph": "0" * 64, "groups": [[1, 3]]} for i in ids}}

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"application/vnd.chipsim.answer+json": self.doc, "text/plain": "forged"}


_real_submit = submit


def submit(part, *fns, hidden=False):
    if part == "fusion_epilogue":
        return Forged(part, ["dense_small", "dense_wide", "dense_h1", "dense_h2"])
    return _real_submit(part, *fns, hidden=hidden)
"""

INFINITE_LOOP = """
def my_fusion(graph, chip):
    while True:
        pass
"""

STUBBORN_LOOP = """
import time


def _stubborn():
    while True:  # ignores the interrupt: the grader must restart the kernel
        try:
            time.sleep(0.5)
        except BaseException:
            pass


def pattern_of(op):
    _stubborn()


def may_fuse(producer, consumer):
    _stubborn()
"""

MEMORY_HOG = """
import numpy as np


_honest = my_fusion


def my_fusion(graph, chip):
    hog = [np.zeros(2**31) for _ in range(4)]  # 64 GiB of address space: MemoryError
    return _honest(graph, chip) if hog else None
"""

SKIP_WORK = """
def my_fusion(graph, chip):  # fast but wrong: leave the costly ops out of every kernel
    costly = ("constant", "matmul", "conv2d", "softmax", "layernorm")
    return as_partition(graph, [[i] for i, n in enumerate(graph.nodes) if n.op not in costly])
"""

ALT_PATTERNS = """
E, B, I = Pattern.ELEMENTWISE, Pattern.BROADCAST, Pattern.INJECTIVE
R, C, O = Pattern.REDUCTION, Pattern.CONTRACTION, Pattern.OPAQUE

GROUPS = {
    E: "neg exp log sqrt rsqrt tanh sigmoid relu gelu cast",
    B: "add sub mul div maximum minimum gt lt ge le eq where broadcast_to",
    I: "transpose reshape concat slice",
    R: "sum max mean softmax layernorm",
    C: "matmul conv2d",
    O: "constant",
}
TABLE = {op: p for p, names in GROUPS.items() for op in names.split()}
ALLOWED = {(p, c) for p in (E, B, I) for c in (E, B, I, R)}
ALLOWED |= {(R, c) for c in (E, B, I)} | {(C, E), (C, B)}


def pattern_of(op):
    return TABLE[op]


def may_fuse(producer, consumer):
    return (producer, consumer) in ALLOWED
"""

ALT_CHAINS = """
from chipsim.ir import get_op

CHEAP = (Pattern.ELEMENTWISE, Pattern.BROADCAST)


def fuse_chains(graph, chip):
    \"\"\"Union-find: a cheap op joins its single cheap consumer.\"\"\"
    users = consumers(graph)
    outputs = set(graph.outputs)
    parent = list(range(len(graph.nodes)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def cheap(i):
        return get_op(graph.nodes[i].op).pattern in CHEAP

    for i, node in enumerate(graph.nodes):
        if node.op == "constant" or node.output in outputs or len(users[i]) != 1:
            continue
        j = users[i][0]
        if cheap(i) and cheap(j):
            parent[find(i)] = find(j)
    groups = {}
    for i, node in enumerate(graph.nodes):
        if node.op != "constant":
            groups.setdefault(find(i), []).append(i)
    return as_partition(graph, list(groups.values()))
"""

NOISY_PRINTS = """
import warnings

print("debugging: my epilogue pass starts here")
warnings.warn("this draft still has TODOs")  # a Python warning in the learner's cell
"""


# -- ways around a block-list of names (the issue found ten): each reaches the reference --------
BYPASSES = {
    "rt_attrgetter": "import operator\n\n\ndef my_fusion(graph, chip):\n"
    "    return operator.attrgetter('compiler.fusion.reference_fusion')(chipsim)(graph, chip)\n",
    "rt_reduce_getattr": "import functools\n\n\ndef my_fusion(graph, chip):\n"
    "    path = ['compiler', 'fusion', 'reference_fusion']\n"
    "    return functools.reduce(getattr, path, chipsim)(graph, chip)\n",
    "rt_sys_modules": "import sys\n\n\ndef my_fusion(graph, chip):\n"
    "    return sys.modules['chipsim.compiler.fusion'].reference_fusion(graph, chip)\n",
    "rt_get_ipython": "def my_fusion(graph, chip):\n"
    "    get_ipython().ex('from chipsim.compiler.fusion import reference_fusion as _r')\n"
    "    return get_ipython().user_ns['_r'](graph, chip)\n",
    "rt_builtins_attr": "import builtins\n\n\ndef my_fusion(graph, chip):\n"
    "    space = {}\n"
    "    builtins.__dict__['ex' + 'ec']('from chipsim.compiler.fusion import reference_fusion "
    "as R', space)\n    return space['R'](graph, chip)\n",
    "rt_compile_alias": "def my_fusion(graph, chip):\n"
    "    how = dict(fusion='refe' + 'rence', simplify=False)\n"
    "    return chipsim.compile(graph, **how).partition\n",
    "rt_redefine_name": "from grader.scoring import checks as reference_fusion\n\n\n"
    "def my_fusion(graph, chip):\n"
    "    return reference_fusion.fusion_strategy('reference', graph)\n",
    "rt_pickle": "import pickle\n\n\ndef my_fusion(graph, chip):\n"
    "    ref = pickle.loads(b'cchipsim.compiler.fusion\\nreference_fusion\\n.')\n"
    "    return ref(graph, chip)\n",
    "rt_gc": "import gc\n\n\ndef my_fusion(graph, chip):\n"
    "    name = 'reference_fusion'\n"
    "    found = [o for o in gc.get_objects() if getattr(o, '__name__', '') == name]\n"
    "    return found[0](graph, chip)\n",
    "rt_frame_builtins": "import sys\n\n\ndef my_fusion(graph, chip):\n"
    "    imp = sys._getframe().f_builtins['__import__']\n"
    "    return imp('chipsim.compiler.fusion', fromlist=['x']).reference_fusion(graph, chip)\n",
    # new ones: the reference's source found on disk, or in a clever-looking place
    "rt_source_on_disk": "import glob\n\n\ndef my_fusion(graph, chip):\n"
    "    for path in glob.glob('/**/compiler/fusion.py', recursive=True):\n"
    "        space = {'__name__': 'stolen'}\n"
    "        exec(compile(open(path).read(), path, 'exec'), space)\n"
    "        return space['reference_fusion'](graph, chip)\n"
    "    raise RuntimeError('no source found')\n",
}

# -- attacks on the mechanisms of issue 27 (seeds, floods, odd data) ------------------------------
#: Print every hidden instance it is given (they are this submission's only: nothing to gain).
PRINT_HIDDEN = """
from grader import instances

for name, graph in instances("fusion_chains", hidden=True).items():
    print(name, graph.name, len(graph.nodes))  # no seed in sight: the name is the id
"""

#: A forged answer output whose data has the wrong shape ("patterns": true): nbgrader must
#: still grade the notebook; the part scores 0 with a message naming the field.
FORGED_SHAPE = """
from IPython.display import display
from grader import submit as real_submit
from grader.scoring.answer import MIME


def submit(part, *fns, hidden=False):  # overwrite the test helper for part 1 only
    if part != "fusion_patterns":
        return real_submit(part, *fns, hidden=hidden)
    ids = ["items_a"] + [f"items_h{k}" for k in range(1, 9)]
    doc = {"format": "chipsim.answer", "version": 1, "part": part,
           "answers": {i: {"patterns": True, "may_fuse": 7} for i in ids}}
    display({MIME: doc}, raw=True)
"""

#: A flood the old output budget did not count: huge metadata, long MIME names, and display
#: updates rewriting many outputs at once.
DISPLAY_FLOOD = """
from IPython.display import display, update_display

for k in range(40):
    display({"text/plain": "x"}, raw=True, metadata={"junk": "y" * 1_000_000})
    display({"m" * 400_000: "z", "text/plain": "w"}, raw=True)
for k in range(30):
    display({"text/plain": str(k)}, raw=True, display_id="again")
for k in range(30):
    update_display({"text/plain": "q" * 2_000_000}, raw=True, display_id="again")
"""

#: HTML that would run in the feedback page.
SCRIPT_OUTPUT = """
from IPython.display import HTML, display

display(HTML("<script>document.title = 'pwned'</script><img src=x onerror=\"alert(1)\">"))
"""

#: A helper module imported from beside the notebook (the submission's own plain file).
USES_HELPER = """
import helpers_of_mine


def my_fusion(graph, chip):
    assert helpers_of_mine.READY
    return _solution_fusion(graph, chip)
"""

#: A cell IPython runs but ``ast.parse`` rejects (the old scan skipped such cells).
UNPARSABLE = "files = !true\nfrom chipsim.compiler.fusion import reference_fusion as SMUGGLED\n"
UNPARSABLE_USE = "def my_fusion(graph, chip):\n    return SMUGGLED(graph, chip)\n"

#: An experiments cell that kills every process it can see (its own kernel included) and
#: leaves a crowd of daemons: the grader, and every other learner, must not notice.
KILL_ALL = """
import os, signal, subprocess
for _ in range(100):
    subprocess.Popen(["sleep", "987655"], start_new_session=True)
for pid in (1, os.getppid()):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
os.kill(-1, signal.SIGKILL)
"""

#: What honest learners wrote that a static scan once zeroed.
HONEST_CLASS = """
class Merger:
    \"\"\"A helper object (the scan used to refuse ``super().__init__`` and ``__name__``).\"\"\"

    def __init__(self):
        super().__init__()
        self.label = type(self).__name__


def my_fusion(graph, chip):
    assert Merger().label == "Merger"
    return _solution_fusion(graph, chip)
"""
HONEST_EXPERIMENTS = (
    "%time _ = fuse_chains(chains, chip)\n",
    "from IPython.display import display\n\ndisplay(chipsim.compile(chains, fusion=None).report)\n",
)


def _with_cells(nb, after_gid: str, sources: list[str]):
    """A copy of ``nb`` with new plain code cells after the cell ``after_gid``."""
    nb = nbformat.from_dict(nb)
    k = next(
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == after_gid
    )
    for s in reversed(sources):
        nb.cells.insert(k + 1, nbformat.v4.new_code_cell(s))
    return nb


def students(released, solution, course) -> dict:
    """name -> submitted notebook, and name -> the parts it must lose (the rest: full)."""
    src = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in solution.cells}
    solved = {
        "fusion_patterns_code",
        "fusion_chains_code",
        "fusion_epilogue_code",
        "fusion_challenge_code",
    }
    checks = course / "pkg" / "grader" / "scoring" / "checks.py"
    secret = course / "solutions" / "fusion" / "fusion.ipynb"

    def sol(**replace):
        return mix(released, solution, solved, {f"{k}_code": v for k, v in replace.items()})

    hardcoded = _hardcoded_chains()
    edited = sol(
        fusion_epilogue=src["fusion_epilogue_code"].split("### BEGIN SOLUTION")[0]
        + "    raise NotImplementedError\n"
    )
    for c in edited.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "fusion_epilogue":
            c.source = "3.0  # the learner edited the test cell"
    edited.cells = [
        c
        for c in edited.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") != "fusion_challenge"
    ]
    tamper = src["fusion_challenge_code"].replace(
        "def my_fusion(graph, chip):",
        f"def my_fusion(graph, chip):\n    open({str(checks)!r}, 'a').write('\\nSCORE = 4.0\\n')",
    )
    reader = src["fusion_challenge_code"].replace(
        "def my_fusion(graph, chip):",
        f"def my_fusion(graph, chip):\n    open({str(secret)!r}).read()  # copy the reference",
    )
    duplicated = sol()
    k = next(i for i, c in enumerate(duplicated.cells)
             if c.metadata.get("nbgrader", {}).get("grade_id") == "fusion_chains")  # fmt: skip
    duplicated.cells.insert(k, nbformat.from_dict(duplicated.cells[k]))  # same ids, twice
    nbs = {
        "honest_reference": (solution, {}),
        "honest_helper_module": (
            sol(
                fusion_challenge=src["fusion_challenge_code"].replace(
                    "def my_fusion(graph, chip):", "def _solution_fusion(graph, chip):"
                )
                + USES_HELPER
            ),
            {},
        ),
        "honest_duplicated_test_cell": (duplicated, {}),
        "rt_print_hidden": (_with_cells(sol(), "fusion_chains", [PRINT_HIDDEN]), {}),
        "rt_forged_shape": (
            _with_cells(sol(), "fusion_patterns_code", [FORGED_SHAPE]),
            {"fusion_patterns": 0.0},
        ),
        "rt_display_flood": (_with_cells(sol(), "fusion_chains", [DISPLAY_FLOOD]), {}),
        "rt_script_output": (_with_cells(sol(), "fusion_chains", [SCRIPT_OUTPUT]), {}),
        "honest_dunders": (
            sol(
                fusion_challenge=src["fusion_challenge_code"].replace(
                    "def my_fusion(graph, chip):", "def _solution_fusion(graph, chip):"
                )
                + HONEST_CLASS
            ),
            {},
        ),  # fmt: skip
        "honest_magics": (_with_cells(sol(), "fusion_chains", list(HONEST_EXPERIMENTS)), {}),
        "rt_kill_everything": (_with_cells(sol(), "fusion_chains", [KILL_ALL]), {}),
        "rt_unparsable_cell": (
            _with_cells(sol(fusion_challenge=UNPARSABLE_USE), "fusion_epilogue", [UNPARSABLE]),
            {"fusion_challenge": 0.0},
        ),
        # a table of the visible instance and 40 guessed draws: none is ever asked (each
        # submission draws its own), and the visible share counts nothing any more
        "rt_hidden_table": (
            sol(fusion_chains=src["fusion_chains_code"] + _hidden_table()),
            {"fusion_chains": 0.0},
        ),
        **{
            name: (sol(fusion_challenge=code), {"fusion_challenge": 0.0})
            for name, code in BYPASSES.items()
        },  # fmt: skip
        "honest_noisy": (
            sol(
                fusion_epilogue=NOISY_PRINTS
                + src["fusion_epilogue_code"].replace(
                    "def fuse_epilogues(graph, chip):",
                    "def fuse_epilogues(graph, chip):\n"
                    "    print('fusing', graph.name)\n    warnings.warn('draft')",
                )
            ),
            {},
        ),
        "honest_unionfind": (sol(fusion_chains=ALT_CHAINS), {}),
        "honest_table": (sol(fusion_patterns=ALT_PATTERNS), {}),
        "rt_fake_score": (sol(fusion_patterns=STUB_PATTERNS), {"fusion_patterns": 0.0}),
        "rt_monkey_sim": (sol(fusion_challenge=MONKEY_SIM), {"fusion_challenge": 0.0}),
        # patching the kernel's copy of chipsim changes nothing the grader uses: these score
        # what their (honest) functions are worth
        "rt_patch_reference": (
            sol(fusion_challenge=src["fusion_challenge_code"] + PATCH_REFERENCE),
            {},
        ),
        "rt_patch_grading": (
            sol(fusion_challenge=src["fusion_challenge_code"] + PATCH_GRADING),
            {},
        ),
        "rt_hardcoded": (sol(fusion_challenge=hardcoded), {"fusion_challenge": 0.0}),
        # the test cells are restored (sources, and the deleted one): the unsolved part 3
        # loses, and part 4 with it (its my_fusion starts from fuse_epilogues)
        "rt_edit_delete_tests": (edited, {"fusion_epilogue": 0.0, "fusion_challenge": 0.0}),
        "rt_overwrite_submit": (
            _with_cells(sol(), "fusion_chains_code", [OVERWRITE_SUBMIT]),
            {"fusion_chains": 0.0},
        ),
        "rt_forged_other_graph": (
            _with_cells(sol(), "fusion_epilogue_code", [FORGED_OTHER_GRAPH]),
            {"fusion_epilogue": 0.0},
        ),
        "rt_skip_work": (sol(fusion_challenge=SKIP_WORK), {"fusion_challenge": 0.0}),
        "rt_getattr_reference": (sol(fusion_challenge=GETATTR_REF), {"fusion_challenge": 0.0}),
        "rt_importlib_reference": (sol(fusion_challenge=IMPORTLIB_REF), {"fusion_challenge": 0.0}),
        "rt_tamper_package": (sol(fusion_challenge=tamper), {"fusion_challenge": 0.0}),
        "rt_read_solutions": (sol(fusion_challenge=reader), {"fusion_challenge": 0.0}),
        "rt_infinite_loop": (sol(fusion_challenge=INFINITE_LOOP), {"fusion_challenge": 0.0}),
        "rt_stubborn_loop": (sol(fusion_patterns=STUBBORN_LOOP), {"fusion_patterns": 0.0}),
        "rt_memory_hog": (
            sol(fusion_challenge=src["fusion_challenge_code"] + MEMORY_HOG),
            {"fusion_challenge": 0.0},
        ),
    }
    return nbs


def _hidden_table() -> str:
    """fuse_chains answering from a table of the reference's partitions: the visible instance
    and the hidden family at 40 guessed seeds (all the package alone can produce)."""
    from chipsim.passes.fusion import fuse_elementwise_chains
    from grader.notebook import instances
    from grader.problems.families import chain_variant
    from grader.scoring.answer import graph_fingerprint

    graphs = [*instances("fusion_chains").values(), *(chain_variant(s) for s in range(40))]
    table = {graph_fingerprint(g): [list(x) for x in fuse_elementwise_chains(g).groups]
             for g in graphs}  # fmt: skip
    return (
        "\n\nfrom grader.scoring.answer import graph_fingerprint\n\n"
        f"TABLE = {table!r}\n\n\n"
        "def fuse_chains(graph, chip):  # precomputed offline with the reference pass\n"
        "    return Partition(TABLE[graph_fingerprint(graph)])\n"
    )


def _hardcoded_chains() -> str:
    """my_fusion returning the best reference groups of the visible instances, by graph name."""
    from grader.notebook import instances
    from grader.scoring.references import baseline

    answers = {}
    for iid, graph in instances("fusion_challenge").items():
        answers[graph.name] = [
            list(g) for g in baseline("fusion_challenge", iid)["shown"].partition.groups
        ]
    return (
        f"ANSWERS = {answers!r}\n\n\n"
        "def my_fusion(graph, chip):  # the visible instances' answers, hard-coded\n"
        "    return Partition(ANSWERS.get(graph.name, [[0]]))\n"
    )


#: The points of every memory-planning part (full marks).
FULL_MEMORY = {
    "memory_liveness": 2.0,
    "memory_first_fit": 2.0,
    "memory_greedy": 3.0,
    "memory_challenge": 4.0,
}

SQUEEZED_PLANNER = """
def my_planner(records, alignment=64):
    \"\"\"Fast but wrong: every tensor at offset 0, so the arena fits in SRAM (and live
    tensors overwrite each other).\"\"\"
    return MemoryPlan(records, {r.id: 0 for r in records}, alignment, "squeezed")
"""


MEMORY_EXPERIMENTS = """
plain = chipsim.compile(block, fusion=None, planner=None, simplify=False)
mine = chipsim.compile(block, fusion=None, planner=my_planner, simplify=False)
print(plain.report.cycles, mine.report.cycles)
"""
REFERENCE_PLANNER = """
from chipsim.passes.memory import get_planner


def my_planner(records, alignment=64):
    return get_planner("sea" + "rch")(records, alignment=alignment)
"""
REFERENCE_LIVENESS = """
import importlib


def usage_records(graph, schedule):
    return importlib.import_module("chipsim.passes.memory").liveness(graph, schedule)
"""


def memory_students(released, solution) -> dict:
    """name -> (submitted memory-planning notebook, the parts it must lose)."""
    solved = {f"{p}_code" for p in FULL_MEMORY}

    def sol(**replace):
        return mix(released, solution, solved, {f"{k}_code": v for k, v in replace.items()})

    return {
        "honest_memory_reference": (solution, {}),
        "honest_memory_compile_none": (
            _with_cells(solution, "memory_challenge", [MEMORY_EXPERIMENTS]),
            {},
        ),
        "rt_memory_reference_planner": (
            sol(memory_challenge=REFERENCE_PLANNER),
            {"memory_challenge": 0.0},
        ),
        "rt_memory_reference_liveness": (
            sol(memory_liveness=REFERENCE_LIVENESS),
            {"memory_liveness": 0.0},
        ),
        "rt_memory_squeezed": (
            mix(released, solution, solved, {"memory_challenge_code": SQUEEZED_PLANNER}),
            {"memory_challenge": 0.0},
        ),
    }


#: The points of every instruction-generation part (full marks).
FULL_INSTGEN = {
    "instgen_units": 2.0,
    "instgen_tiling": 3.0,
    "instgen_double": 3.0,
    "instgen_challenge": 4.0,
}

GENERATED_KERNEL = """
from chipsim.codegen.builder import generated


def my_kernel(kb):  # the code generator's own program, asked for by name
    return generated(kb.graph, kb.chip)
"""
REFERENCE_UNITS = """
from chipsim.codegen.units import unit_and_cycles


def choose_unit(item, chip):  # the code generator's own rule and costs
    return unit_and_cycles(item["op"], item["dtype"], item["shapes"], chip)
"""
SKIPPED_SUM = """
def my_kernel(kb):
    \"\"\"Fast but wrong: every sum over its last inner block only.\"\"\"
    ext, (x, w) = kb.extents, kb.operands
    acc = kb.names[kb.contraction]
    made = {out for out, _, _ in kb.epilogue_ops}
    extra = [v for _, _, ins in kb.epilogue_ops for v in ins if v not in made and v != acc]
    k0 = max(0, ext["inner"] - 16)
    for r in range(0, ext["rows"], 16):
        for c in range(0, ext["cols"], 16):
            t = kb.tile((r, min(16, ext["rows"] - r)), (c, min(16, ext["cols"] - c)),
                        (k0, ext["inner"] - k0))
            where, at = {}, 0
            for name in (x, w, *extra):
                where[name] = kb.load(name, t, at)
                at += -(-kb.tile_bytes(name, t) // 64) * 64
            out = kb.contract(t, at, {x: where[x], w: where[w]})
            for value, _op, ins in kb.epilogue_ops:
                kb.epilogue(value, t, at, {v: where.get(v, out) for v in ins})
            kb.store(kb.outputs[0], t, at)
    return kb
"""


INSTGEN_EXPERIMENTS = """
mine = double_buffer(KernelBuilder(skinny, chip))
report = run_kernel(mine, functional=False)[1]
print(mine.missing() or len(mine), report.cycles, dma_overlap(report.records))
"""


def instgen_students(released, solution) -> dict:
    """name -> (submitted instruction-generation notebook, the parts it must lose)."""
    solved = {f"{p}_code" for p in FULL_INSTGEN}

    def sol(**replace):
        return mix(released, solution, solved, {f"{k}_code": v for k, v in replace.items()})

    return {
        "honest_instgen_reference": (solution, {}),
        "honest_instgen_experiments": (
            _with_cells(solution, "instgen_double", [INSTGEN_EXPERIMENTS]),
            {},
        ),
        "rt_instgen_generated": (sol(instgen_challenge=GENERATED_KERNEL),
                                 {"instgen_challenge": 0.0}),
        "rt_instgen_reference_units": (sol(instgen_units=REFERENCE_UNITS),
                                       {"instgen_units": 0.0}),
        "rt_instgen_skipped_sum": (sol(instgen_challenge=SKIPPED_SUM),
                                   {"instgen_challenge": 0.0}),
    }  # fmt: skip
