"""The pristine problem definitions: part id -> instances, each a family and a seed.

A *part* is one graded test cell of an exercise notebook; its id is the nbgrader ``grade_id``
of that cell (``fusion_chains``). Each part has visible instances (the learner sees and
self-checks them) and hidden ones (only the autograder's copy of the test cell asks for
them). An :class:`Instance` is a family (``make(seed) -> problem``) and a seed: a visible
instance's seed is public and fixed here; a hidden instance has **no seed in the package** —
the grader draws a fresh one for every submission, from a secret only it holds and the
submission's own digest (:mod:`grader.problems.hidden`), and binds it with :meth:`Part.bind`.
So the installed package can build *an* instance of every family, but not the ones a
submission is graded on, and what one grading shows a learner says nothing about the next.
A learner's kernel receives the hidden instances' *data* (graphs, records), never a seed, and
a hidden instance's name is its id, never its seed.

**One exception: the fusion challenge is graded on a benchmark.** A pass that searches with
the simulator spends seconds on each graph, so the challenge can afford only a few dozen of
them, and on a few dozen drawn graphs a middling pass's points moved by about a third of a
point from one course secret to the next (``benchmarks/README.md``). So its points come from
a fixed *benchmark* (:func:`_benchmark`: seeds in the package, the same graphs for every
submission in every course run), and a few graphs drawn for the submission *check* it
(``Instance.check``): a pass that earns much less on them than on the benchmark, as a table of
answers prepared for the benchmark would, is graded on them instead
(:data:`~grader.scoring.partscore.CHECK_MARGIN`). Every instance is rebuilt from its
family and seed whenever the grader needs it, so the grader never uses an object that came
from a learner's kernel.

**Visible instances are for practice; the points come from the hidden ones.** The test cell
shows a provisional score on the visible instances; the grader scores every instance again and
counts only the hidden ones (the visible ones appear in the feedback as a preview), so a table
of the visible answers earns nothing.

Instance kinds (what the learner's function gets, and how the answer is scored):

========== ============================== ===============================================
kind       learner's function             score
========== ============================== ===============================================
classify   ``pattern_of(op)``,            exact: correct items beyond a constant guess
           ``may_fuse(producer, consumer)``
fusion     ``fn(graph, chip) -> Partition`` cycles between reference and no fusion
liveness   ``fn(graph, schedule)``          exact: fraction of correct usage records
units      ``fn(item, chip)``              exact: unit beyond chance, and its cycles
program    ``fn(kb)`` (a KernelBuilder)     cycles of the learner's instructions (and the
                                          DMA overlap, where the part says so)
first_fit  ``fn(records, alignment=64)``    exact: fraction of offsets equal to first fit's
arena      ``fn(records, alignment=64)``    arena bytes between reference and naive planner
plan       ``fn(records, alignment=64)``    cycles of the compiled program (no fusion)
========== ============================== ===============================================

Example:
    >>> part = PARTS["fusion_chains"]
    >>> part.assignment, [i.id for i in part.visible()]
    ('fusion', ['chains_a', 'chains_b'])
    >>> part.instance("chains_a").build().name
    'chains0'
    >>> part.bind({"chains_h1": 7}).instance("chains_h1").build().name  # never the seed
    'chains_h1'
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from chipsim.errors import ChipsimError
from chipsim.i18n import N_
from chipsim.ir import Graph
from chipsim.passes.memory.instances import mobilenet_v2_records
from chipsim.testing.memory_instances import random_records
from grader.problems import families as graphs
from grader.problems import kernels
from grader.problems.items import (
    classify_items,
    classify_variant,
    liveness_problem,
    liveness_stratum,
)

#: The chip every exercise targets (one home: the families size their instances against it).
CHIP = graphs.CHIP
#: Alignment every memory plan uses (one home: the families' reference plans use it too).
ALIGNMENT = graphs.ALIGNMENT


class HiddenInstanceError(ChipsimError):
    """A hidden instance was asked for without its seed (only the grader has the seeds)."""


@dataclass(frozen=True, slots=True)
class Instance:
    """One problem instance: an id, its kind, its family ``make(seed)`` and its seed.

    A hidden instance's ``seed`` is None until the grader binds it (:meth:`Part.bind`).
    ``family``: the name of the family it was drawn from (hidden instances, ``tight_h``); a
    part's points weigh each family the same (:func:`~grader.scoring.credit.mean_credit`).
    ``stratum``: the row of its family's table of sizes it is drawn from (None: no table).
    ``benchmark``: hidden, but its seed is in the package, the same for every submission
    (:func:`_benchmark`); ``check``: drawn for the submission to check a benchmark, and
    counted only when the learner's pass does much worse on it (see the module's text).
    """

    id: str
    kind: str
    make: Callable[[int], Any]
    seed: int | None = 0
    hidden: bool = False
    family: str = ""
    stratum: int | None = None
    benchmark: bool = False
    check: bool = False

    def build(self) -> Any:
        """The problem (a graph, records, ...), built afresh from the family and the seed.

        A hidden instance's graph is named after the instance, so nothing it carries names
        its seed."""
        if self.seed is None:
            raise HiddenInstanceError(
                f"instance {self.id!r} is hidden: it is drawn from the grader's secret and "
                "exists only while a notebook is graded"
            )
        problem = self.make(self.seed)
        return _renamed(problem, self.id) if self.hidden else problem


def _renamed(problem: Any, name: str) -> Any:
    """``problem`` with its graph (alone, or first of a tuple) called ``name``."""
    if isinstance(problem, Graph):
        return problem.replace(name=name)
    if isinstance(problem, tuple) and problem and isinstance(problem[0], Graph):
        return (problem[0].replace(name=name), *problem[1:])
    return problem


@dataclass(frozen=True, slots=True)
class Part:
    """One graded part (one nbgrader test cell).

    Attributes:
        id: the test cell's nbgrader ``grade_id``.
        assignment: the nbgrader assignment it belongs to.
        title: a short human title (English; shown translated with ``tr(part.title)``).
        points: the points of the test cell (the notebook's metadata must agree).
        functions: names of the learner's functions the test cell passes to ``submit``.
        forbidden: extra names this part asks learners to write themselves (flagged, see
            :mod:`~grader.course.static_check`).
        reference: the reference strategies; the best of them sets full credit.
        instances: visible and hidden instances, in scoring order.
        baseline: a strategy that earns :data:`~grader.scoring.credit.BASELINE_CREDIT`
            (the open challenges: the course's simple pass earns half, see
            :func:`~grader.scoring.credit.credit`); ``""``: linear from naive to reference.
        slack: full credit within this fraction of the reference's result.
        naive: the strategy that earns nothing (``""``: the instance kind's own naive
            answer: no fusion, no reuse).
    """

    id: str
    assignment: str
    title: str
    points: float
    functions: tuple[str, ...]
    forbidden: tuple[str, ...]
    reference: tuple[str, ...]
    instances: tuple[Instance, ...]
    baseline: str = ""
    slack: float = 0.0
    naive: str = ""

    def visible(self) -> list[Instance]:
        """The instances a learner sees and practises on (not counted in the grade)."""
        return [i for i in self.instances if not i.hidden]

    @property
    def challenge(self) -> bool:
        """An open challenge: the reference can be beaten, and the grade follows the draw."""
        return self.id.endswith("_challenge")

    def hidden(self) -> list[Instance]:
        """The instances only the grader asks for (drawn per submission, or a benchmark's)."""
        return [i for i in self.instances if i.hidden]

    def graded(self) -> list[Instance]:
        """The hidden instances the points come from (all but a benchmark's check)."""
        return [i for i in self.instances if i.hidden and not i.check]

    def checks(self) -> list[Instance]:
        """The hidden instances drawn to check a benchmark (none but the fusion challenge's)."""
        return [i for i in self.instances if i.check]

    def families(self) -> dict[str, str]:
        """``instance id -> family`` of the instances drawn from a family (the hidden ones);
        each family weighs the same in the part's points, whatever its number of instances
        (:func:`~grader.scoring.credit.mean_credit`), and every other instance is one of its
        own."""
        return {i.id: i.family for i in self.instances if i.family}

    def instance(self, instance_id: str) -> Instance:
        for i in self.instances:
            if i.id == instance_id:
                return i
        raise KeyError(f"part {self.id!r} has no instance {instance_id!r}")

    def bind(self, seeds: Mapping[str, int]) -> Part:
        """This part with its hidden instances' seeds (instance id -> seed) filled in."""
        bound = tuple(
            replace(i, seed=int(seeds[i.id]))
            if i.hidden and not i.benchmark and i.id in seeds
            else i
            for i in self.instances
        )
        return replace(self, instances=bound)


# -- the parts -----------------------------------------------------------------------------
def _inst(id: str, kind: str, make: Callable[[int], Any], seed: int = 0) -> Instance:
    """A visible instance: ``make(seed)`` with a public seed."""
    return Instance(id, kind, make, seed)


def _hidden(
    prefix: str,
    kind: str,
    make: Callable[..., Any],
    count: int,
    *,
    strata: int = 0,
    family: str = "",
    check: bool = False,
) -> tuple[Instance, ...]:
    """``count`` hidden instances ``<prefix>1 ...``: the family only; the grader supplies the
    seeds, new ones for every submission. With ``strata`` (the number of rows of the family's
    table of sizes), instance k is drawn from stratum k (``make(seed, stratum=k)``, row k
    modulo ``strata``, :mod:`~grader.problems.families`). Several instances per family, and
    strata, make a score that hangs on no single draw (``benchmarks/grading_spread.py``
    measures the spread). ``family``: the family's name (default: ``prefix``); ``check``:
    instances that check a benchmark (:func:`_benchmark`) rather than count."""
    return tuple(
        Instance(f"{prefix}{k + 1}", kind, functools.partial(make, stratum=k) if strata else make,
                 None, True, family or prefix, k % strata if strata else None, check=check)
        for k in range(count)
    )  # fmt: skip


#: What a benchmark's seeds are derived from (public: anyone can build the benchmark).
BENCHMARK_SALT = "chipsim benchmark 2026"


def benchmark_seed(instance_id: str) -> int:
    """The published seed of the benchmark instance ``instance_id`` (64 bits).

    Example:
        >>> benchmark_seed("cnn_b1") == benchmark_seed("cnn_b1") != benchmark_seed("cnn_b2")
        True
    """
    digest = hashlib.sha256(f"{BENCHMARK_SALT}/{instance_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _benchmark(
    prefix: str, kind: str, make: Callable[..., Any], count: int, *, strata: int, family: str
) -> tuple[Instance, ...]:
    """``count`` hidden instances ``<prefix>1 ...`` with their seeds in the package
    (:func:`benchmark_seed`): the same graphs for every submission, drawn from the family's
    strata as :func:`_hidden` draws them. They are hidden as the drawn ones are (the kernel
    gets their data, named by their ids), but anyone can build them: the graphs drawn for the
    submission that check them (``_hidden(..., check=True)``) are what keeps a table of
    answers prepared for them from paying."""
    return tuple(
        replace(inst, seed=benchmark_seed(inst.id), benchmark=True)
        for inst in _hidden(prefix, kind, make, count, strata=strata, family=family)
    )


#: Hidden instances per family: enough that a score hangs on no single draw (the spread of a
#: notebook's points over course secrets is measured by ``benchmarks/grading_spread.py``).
#: Each family weighs the same in a part's points whatever its count (:meth:`Part.families`),
#: so a family cheap to draw and solve may be drawn often: the memory challenge's tight arenas,
#: where a planner's credit varies most from draw to draw, and the fusion challenge's small CNNs.
HIDDEN_PER_FAMILY = {
    "classify": 1, "chains": 6, "dense": 96, "transformer": 8, "cnn": 16,
    "transformer_check": 4, "cnn_check": 8,
    "liveness": 24, "first_fit": 40, "arena": 48, "plan": 40, "tight": 200,
    "units": 6, "tiling": 6, "streaming": 40, "conv": 32, "mlp": 32,
}  # fmt: skip


#: How a part's explanation names its baseline and its named naive answer (English, shown
#: with ``tr``): "50% at {name}", "naive 2,000 ({name})". The keys are the references'
#: strategies (:mod:`~grader.scoring.references`).
STRATEGY_TITLES = {
    "greedy_by_size": N_("greedy by size"),
    "single": N_("the single-buffered program"),
    "smallest": N_("16 x 16 x 16 tiles"),
}


def strategy_title(key: str) -> str:
    """A part's baseline or named naive strategy as its explanation names it (English, for
    ``tr`` where shown; a strategy without a title: its key).

    Example:
        >>> strategy_title("single"), strategy_title("greedy_by_size")
        ('the single-buffered program', 'greedy by size')
    """
    return STRATEGY_TITLES.get(key, key)


H = HIDDEN_PER_FAMILY
#: The open challenges give full credit within this fraction of the reference: the course's
#: references are a measured autotuner (fusion) and a long branch-and-bound search (memory),
#: and a complete notebook answer (the model solution) lands within a few percent of them on
#: every draw (``tests/grading/test_grading_fairness.py``); the leaderboard ranks the rest.
CHALLENGE_SLACK = 0.06

FUSION_PARTS = (
    Part(
        "fusion_patterns",
        "fusion",
        N_("pattern classes and the fusion rule"),
        2,
        ("pattern_of", "may_fuse"),
        ("get_op", "can_fuse", "op_pattern", "group_pattern", "fusion_round", "OPS"),
        (),
        (
            _inst(
                "items_a",
                "classify",
                classify_items(
                    ("exp", "add", "transpose", "sum", "matmul"),
                    (
                        ("elementwise", "elementwise"),
                        ("broadcast", "reduction"),
                        ("contraction", "elementwise"),
                        ("contraction", "contraction"),
                        ("reduction", "reduction"),
                        ("opaque", "elementwise"),
                    ),
                ),
            ),
            *_hidden("items_h", "classify", classify_variant, H["classify"]),
        ),
    ),
    Part(
        "fusion_chains",
        "fusion",
        N_("greedy fusion of elementwise chains"),
        3,
        ("fuse_chains",),
        (),
        ("elementwise",),
        (
            _inst("chains_a", "fusion", lambda s: graphs.chain_graph(s, 256, 256)),
            # merging everything into one kernel is slower here (a lesson the part teaches)
            _inst("chains_b", "fusion", lambda s: graphs.chain_graph(s, 384, 320, 3), 7),
            *_hidden(
                "chains_h",
                "fusion",
                graphs.chain_variant,
                H["chains"],
                strata=len(graphs.CHAIN_STRATA),
            ),
        ),
    ),
    Part(
        "fusion_epilogue",
        "fusion",
        N_("epilogue fusion within the SRAM budget"),
        3,
        ("fuse_epilogues",),
        (),
        ("epilogue",),
        (
            _inst("dense_small", "fusion", lambda s: graphs.epilogue_graph(s, 512, 128, 256)),
            _inst("dense_wide", "fusion", lambda s: graphs.epilogue_graph(s, 128, 256, 4096), 1),
            *_hidden(
                "dense_h",
                "fusion",
                graphs.epilogue_variant,
                H["dense"],
                strata=len(graphs.DENSE_STRATA),
            ),
        ),
    ),
    Part(
        "fusion_challenge",
        "fusion",
        N_("open challenge: a transformer block and a small CNN"),
        4,
        ("my_fusion",),
        (),
        ("reference", "reference_window", "elementwise"),
        (
            _inst("transformer", "fusion", lambda s: graphs.transformer_graph(s, 128, 64, 256)),
            _inst("cnn", "fusion", lambda s: graphs.cnn_graph(s, 16, (3, 16, 32), 8)),
            *_benchmark(
                "transformer_b",
                "fusion",
                graphs.transformer_variant,
                H["transformer"],
                strata=len(graphs.TRANSFORMER_STRATA),
                family="transformer",
            ),
            *_benchmark(
                "cnn_b",
                "fusion",
                graphs.cnn_variant,
                H["cnn"],
                strata=len(graphs.CNN_STRATA),
                family="cnn",
            ),
            *_hidden(
                "transformer_h",
                "fusion",
                graphs.transformer_variant,
                H["transformer_check"],
                strata=len(graphs.TRANSFORMER_STRATA),
                family="transformer",
                check=True,
            ),
            *_hidden(
                "cnn_h",
                "fusion",
                graphs.cnn_variant,
                H["cnn_check"],
                strata=len(graphs.CNN_STRATA),
                family="cnn",
                check=True,
            ),
        ),
        slack=CHALLENGE_SLACK,
    ),
)

MEMORY_PARTS = (
    Part(
        "memory_liveness",
        "memory_planning",
        N_("liveness: usage records from a schedule"),
        2,
        ("usage_records",),
        (),
        (),
        (
            # seed 3: an input whose one reader runs first (its lifetime is [0, 1)), where an
            # off-by-one gives an empty lifetime: the test cell shows what grading would
            _inst("live_a", "liveness", lambda s: liveness_problem(s, False), 3),
            *_hidden("live_h", "liveness", liveness_stratum, H["liveness"], strata=H["liveness"]),
        ),
    ),
    Part(
        "memory_first_fit",
        "memory_planning",
        N_("first-fit offsets"),
        2,
        ("first_fit_plan",),
        (),
        (),
        (
            _inst("ff_a", "first_fit", lambda s: random_records(8, s, steps=8, max_size=4096), 1),
            *_hidden(
                "ff_random_h",
                "first_fit",
                lambda s: random_records(30, s, steps=20),
                H["first_fit"],
            ),
            *_hidden(
                "ff_mobilenet_h", "first_fit", graphs.mobilenet_variant_records, H["first_fit"]
            ),
        ),
    ),
    Part(
        "memory_greedy",
        "memory_planning",
        N_("greedy-by-size offsets and the lower bound"),
        3,
        ("greedy_plan",),
        (),
        ("greedy_by_size",),
        (
            _inst("mobilenet_v2", "arena", lambda _s: mobilenet_v2_records()),
            _inst("random_40", "arena", lambda s: random_records(40, s), 3),
            *_hidden("mobilenet_h", "arena", graphs.mobilenet_variant_records, H["arena"]),
            *_hidden("random_h", "arena", lambda s: random_records(60, s, steps=80), H["arena"]),
        ),
    ),
    Part(
        "memory_challenge",
        "memory_planning",
        N_("open challenge: the on-chip scratchpad and tight arenas"),
        4,
        ("my_planner",),
        (),
        ("search", "greedy_by_size"),
        (
            _inst(
                "sram_transformer", "plan", lambda s: graphs.transformer_graph(s, 128, 128, 512), 2
            ),
            _inst("tight_40", "arena", lambda s: graphs.tight_records(s, 40), 2),
            *_hidden(
                "sram_transformer_h",
                "plan",
                graphs.scratchpad_variant,
                H["plan"],
                strata=len(graphs.SCRATCHPAD_STRATA),
            ),
            *_hidden(
                "tight_h",
                "arena",
                graphs.tight_variant,
                H["tight"],
                strata=len(graphs.TIGHT_STRATA),
            ),
        ),
        baseline="greedy_by_size",
        slack=CHALLENGE_SLACK,
    ),
)

#: Part 1's visible items: the ops of a dense layer's kernel, and an int8 one.
UNITS_VISIBLE = {
    "items": [
        {"op": "load", "dtype": "f32", "shapes": [[64, 128]]},
        {"op": "matmul", "dtype": "f32", "shapes": [[64, 128], [128, 64]]},
        {"op": "add", "dtype": "f32", "shapes": [[64, 64], [64, 64]]},
        {"op": "relu", "dtype": "f32", "shapes": [[64, 64]]},
        {"op": "store", "dtype": "f32", "shapes": [[64, 64]]},
        {"op": "matmul", "dtype": "i8", "shapes": [[64, 128], [128, 64]]},
        {"op": "sum", "dtype": "f32", "shapes": [[64, 64]]},
    ]
}


def _units_hidden(seed: int, stratum: int = 0) -> dict:
    return kernels.units_items(seed, 24)


INSTGEN_PARTS = (
    Part(
        "instgen_units",
        "instruction_generation",
        N_("which unit runs each op, and for how many cycles"),
        2,
        ("choose_unit",),
        (),
        (),
        (
            _inst("units_a", "units", lambda _s: UNITS_VISIBLE),
            *_hidden("units_h", "units", _units_hidden, H["units"], strata=1),
        ),
    ),
    Part(
        "instgen_tiling",
        "instruction_generation",
        N_("tiling a matmul and its epilogue into SRAM"),
        3,
        ("tile_kernel",),
        (),
        ("single",),
        (
            _inst("dense_a", "program", lambda s: kernels.dense_kernel(s, 256, 256, 256, "relu")),
            *_hidden(
                "tiling_h",
                "program",
                kernels.tiling_variant,
                H["tiling"],
                strata=len(kernels.TILING_STRATA),
            ),
        ),
        naive="smallest",
    ),
    Part(
        "instgen_double",
        "instruction_generation",
        N_("double buffering: the next tile's DMA under this tile's compute"),
        3,
        ("double_buffer",),
        (),
        ("double",),
        (
            _inst(
                "skinny_a", "program", lambda s: kernels.dense_kernel(s, 32, 1024, 512, "relu"), 1
            ),  # fmt: skip
            *_hidden(
                "stream_h",
                "program",
                kernels.streaming_variant,
                H["streaming"],
                strata=len(kernels.STREAMING_STRATA),
            ),  # fmt: skip
        ),
        naive="single",
    ),
    Part(
        "instgen_challenge",
        "instruction_generation",
        N_("open challenge: a ResNet conv block and a transformer MLP layer"),
        4,
        ("my_kernel",),
        (),
        ("double",),
        (
            _inst("conv_a", "program", lambda s: kernels.conv_kernel(s, 2, 16, 32, 64)),
            _inst(
                "mlp_a", "program", lambda s: kernels.dense_kernel(s, 64, 256, 1024, "gelu"), 2
            ),  # fmt: skip
            *_hidden(
                "conv_h",
                "program",
                kernels.conv_variant,
                H["conv"],
                strata=len(kernels.CONV_STRATA),
            ),
            *_hidden(
                "mlp_h", "program", kernels.mlp_variant, H["mlp"], strata=len(kernels.MLP_STRATA)
            ),
        ),
        baseline="single",
        naive="smallest",
    ),
)

#: Parts whose score also weighs the DMA overlap the simulator measures: half the credit,
#: all of it when the cycles are at or below the reference's (the overlap did its job).
OVERLAP_PARTS = ("instgen_double",)

#: Every part, by id (= the nbgrader grade_id of its test cell).
PARTS: dict[str, Part] = {p.id: p for p in (*FUSION_PARTS, *MEMORY_PARTS, *INSTGEN_PARTS)}

#: The assignments and their parts, in notebook order.
ASSIGNMENTS: dict[str, tuple[str, ...]] = {
    "fusion": tuple(p.id for p in FUSION_PARTS),
    "memory_planning": tuple(p.id for p in MEMORY_PARTS),
    "instruction_generation": tuple(p.id for p in INSTGEN_PARTS),
}


def get_part(part_id: str) -> Part:
    """The part with this id; raises KeyError naming the known ids."""
    if part_id not in PARTS:
        raise KeyError(f"unknown part {part_id!r}; known parts: {', '.join(PARTS)}")
    return PARTS[part_id]
