"""The course's parts: for each assignment, its graded test cells and their instances.

Each :class:`~grader.problems.part.Part` here is one test cell of an exercise notebook (its id
is the cell's nbgrader ``grade_id``), with its points, the learner's functions it calls, the
reference strategies that set full credit, and its instances: visible ones with public seeds,
hidden ones the grader draws for every submission, and the fusion challenge's benchmark. What
a part and an instance are, and why the points come from the hidden instances:
:mod:`grader.problems.part`.

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

from chipsim.i18n import N_
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
from grader.problems.part import (
    Part,
    benchmark,
    drawn,
    visible,
)

#: The chip every exercise targets (one home: the families size their instances against it).
CHIP = graphs.CHIP
#: Alignment every memory plan uses (one home: the families' reference plans use it too).
ALIGNMENT = graphs.ALIGNMENT


# -- the parts -----------------------------------------------------------------------------
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
            visible(
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
            *drawn("items_h", "classify", classify_variant, H["classify"]),
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
            visible("chains_a", "fusion", lambda s: graphs.chain_graph(s, 256, 256)),
            # merging everything into one kernel is slower here (a lesson the part teaches)
            visible("chains_b", "fusion", lambda s: graphs.chain_graph(s, 384, 320, 3), 7),
            *drawn(
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
            visible("dense_small", "fusion", lambda s: graphs.epilogue_graph(s, 512, 128, 256)),
            visible("dense_wide", "fusion", lambda s: graphs.epilogue_graph(s, 128, 256, 4096), 1),
            *drawn(
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
            visible("transformer", "fusion", lambda s: graphs.transformer_graph(s, 128, 64, 256)),
            visible("cnn", "fusion", lambda s: graphs.cnn_graph(s, 16, (3, 16, 32), 8)),
            *benchmark(
                "transformer_b",
                "fusion",
                graphs.transformer_variant,
                H["transformer"],
                strata=len(graphs.TRANSFORMER_STRATA),
                family="transformer",
            ),
            *benchmark(
                "cnn_b",
                "fusion",
                graphs.cnn_variant,
                H["cnn"],
                strata=len(graphs.CNN_STRATA),
                family="cnn",
            ),
            *drawn(
                "transformer_h",
                "fusion",
                graphs.transformer_variant,
                H["transformer_check"],
                strata=len(graphs.TRANSFORMER_STRATA),
                family="transformer",
                check=True,
            ),
            *drawn(
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
            visible("live_a", "liveness", lambda s: liveness_problem(s, False), 3),
            *drawn("live_h", "liveness", liveness_stratum, H["liveness"], strata=H["liveness"]),
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
            visible("ff_a", "first_fit", lambda s: random_records(8, s, steps=8, max_size=4096), 1),
            *drawn(
                "ff_random_h",
                "first_fit",
                lambda s: random_records(30, s, steps=20),
                H["first_fit"],
            ),
            *drawn("ff_mobilenet_h", "first_fit", graphs.mobilenet_variant_records, H["first_fit"]),
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
            visible("mobilenet_v2", "arena", lambda _s: mobilenet_v2_records()),
            visible("random_40", "arena", lambda s: random_records(40, s), 3),
            *drawn("mobilenet_h", "arena", graphs.mobilenet_variant_records, H["arena"]),
            *drawn("random_h", "arena", lambda s: random_records(60, s, steps=80), H["arena"]),
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
            visible(
                "sram_transformer", "plan", lambda s: graphs.transformer_graph(s, 128, 128, 512), 2
            ),
            visible("tight_40", "arena", lambda s: graphs.tight_records(s, 40), 2),
            *drawn(
                "sram_transformer_h",
                "plan",
                graphs.scratchpad_variant,
                H["plan"],
                strata=len(graphs.SCRATCHPAD_STRATA),
            ),
            *drawn(
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
            visible("units_a", "units", lambda _s: UNITS_VISIBLE),
            *drawn("units_h", "units", _units_hidden, H["units"], strata=1),
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
            visible("dense_a", "program", lambda s: kernels.dense_kernel(s, 256, 256, 256, "relu")),
            *drawn(
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
            visible(
                "skinny_a", "program", lambda s: kernels.dense_kernel(s, 32, 1024, 512, "relu"), 1
            ),  # fmt: skip
            *drawn(
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
            visible("conv_a", "program", lambda s: kernels.conv_kernel(s, 2, 16, 32, 64)),
            visible(
                "mlp_a", "program", lambda s: kernels.dense_kernel(s, 64, 256, 1024, "gelu"), 2
            ),  # fmt: skip
            *drawn(
                "conv_h",
                "program",
                kernels.conv_variant,
                H["conv"],
                strata=len(kernels.CONV_STRATA),
            ),
            *drawn(
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
