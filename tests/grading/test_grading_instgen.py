"""The instruction-generation parts score what they say: exact unit rules beyond a constant
guess, a program's cycles only when it computes the right values, and a wrong program told
which instruction stored the wrong tile."""

from __future__ import annotations

from hand_kernels import loop_nest

from chipsim.codegen.builder import KernelBuilder
from chipsim.hw import get_chip
from grader import score_answer
from grader.problems.parts import PARTS
from grader.scoring.answer import encode, graph_fingerprint

CHIP = get_chip("edge-npu")


def _program_answer(graph, kb):
    return {"graph": graph_fingerprint(graph), "program": kb.data()}


def test_a_wrong_program_scores_zero_and_names_the_store_of_the_wrong_tile():
    part = PARTS["instgen_tiling"]
    graph = part.instance("dense_a").build()
    kb = loop_nest(KernelBuilder(graph, CHIP), 32, 32, last_inner_only=True)
    doc = encode(part.id, {"dense_a": _program_answer(graph, kb)})
    (s,) = score_answer(part, doc, points=3, required=["dense_a"]).instances
    assert s.fraction == 0.0 and s.invalid
    assert "output %5 differs from the reference interpreter" in s.message
    assert (
        "first at element (0, 0), stored by instruction #6" in s.message
    )  # x, w, b, mm, add, relu


def test_a_right_program_is_timed_between_naive_and_reference():
    part = PARTS["instgen_tiling"]
    graph = part.instance("dense_a").build()
    kb = loop_nest(KernelBuilder(graph, CHIP), 32, 32)
    doc = encode(part.id, {"dense_a": _program_answer(graph, kb)})
    (s,) = score_answer(part, doc, points=3, required=["dense_a"]).instances
    assert not s.invalid and s.numbers["naive"] > s.numbers["theirs"] > s.numbers["reference"]
    assert 0.0 < s.fraction < 1.0


def test_a_program_for_another_graph_is_refused():
    part = PARTS["instgen_tiling"]
    graph = part.instance("dense_a").build()
    other = PARTS["instgen_double"].instance("skinny_a").build()
    kb = loop_nest(KernelBuilder(other, CHIP), 32, 32)
    doc = encode(part.id, {"dense_a": _program_answer(other, kb)})
    (s,) = score_answer(part, doc, points=3, required=["dense_a"]).instances
    assert s.invalid and "different graph" in s.message
    forged = {"graph": graph_fingerprint(graph), "program": kb.data()}  # data for the other
    (s,) = score_answer(part, encode(part.id, {"dense_a": forged}), points=3,
                        required=["dense_a"]).instances  # fmt: skip
    assert s.invalid and "invalid answer: PlanError" in s.message


def test_one_unit_for_everything_earns_nothing_for_the_units():
    from chipsim.codegen.units import unit_and_cycles

    part = PARTS["instgen_units"]
    items = part.instance("units_a").build()["items"]
    right = [list(unit_and_cycles(i["op"], i["dtype"], i["shapes"], CHIP)) for i in items]
    simd = [["simd", c] for _, c in right]
    scores = {}
    for name, units in (("right", right), ("simd", simd)):
        doc = encode(part.id, {"units_a": {"units": units}})
        (s,) = score_answer(part, doc, points=2, required=["units_a"]).instances
        scores[name] = s.fraction
    assert scores["right"] == 1.0
    assert scores["simd"] == 0.5  # the cycles right, the units no better than a guess


def test_a_small_tile_answer_for_every_instance_fits_the_answer_cap():
    """One answer carries a program per instance of its part, visible and hidden; a valid
    loop nest of small tiles must fit the grader's cap on every part, or the test cell would
    show points that the grader refuses (16 x 16 tiles take about 4.8 MB on the challenge's 66
    instances and 2.7 MB on double buffering's 41, past the 2 MB the cap was before)."""
    from grader.problems.hidden import seeds_for
    from grader.sandbox.outputs import size
    from grader.scoring.answer import MAX_ANSWER_CHARS, MIME

    for pid in ("instgen_tiling", "instgen_double", "instgen_challenge"):
        part = PARTS[pid].bind(seeds_for(b"a course secret!", [pid], "a notebook"))
        answers = {}
        for inst in part.instances:
            graph = part.instance(inst.id).build()
            answers[inst.id] = _program_answer(graph, loop_nest(KernelBuilder(graph, CHIP), 16, 16))
        out = {"output_type": "display_data", "data": {MIME: encode(pid, answers)}}
        assert size(out) <= MAX_ANSWER_CHARS / 2, (pid, size(out))  # room to spare
