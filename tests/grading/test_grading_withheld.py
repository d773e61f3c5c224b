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
    assert GRADER_SAYS in answer.text(), answer.text()


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
