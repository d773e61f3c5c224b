"""Fair scores: the model solution earns full marks on every draw of hidden instances, the
challenges are challenges, and an answer that loses is told why.

In-process, with the grader's own scoring (:mod:`grader.scoring.spread`); the course
secrets are ``b"spread secret k"``. ``benchmarks/grading_spread.py`` runs the same over 20
secrets for the spread table in ``benchmarks/README.md``.
"""

from __future__ import annotations

import pytest

from grader import score_answer, submit
from grader.problems.families import plan_records
from grader.problems.hidden import seeds_for
from grader.problems.parts import PARTS
from grader.scoring.answer import encode, records_fingerprint
from grader.scoring.spread import ROOT, model_functions, notebook_namespace, spread

SECRETS = {  # the slow parts: fewer draws
    "fusion_challenge": 6, "memory_challenge": 3, "instgen_tiling": 6, "instgen_double": 10,
    "instgen_challenge": 2,
}  # fmt: skip


@pytest.fixture(scope="module")
def model():
    return model_functions()


@pytest.mark.parametrize("part_id", list(PARTS))
def test_the_model_solution_earns_full_marks_on_every_secret(model, part_id):
    rows = spread([part_id], {"model": model}, SECRETS.get(part_id, 12))
    scores = rows[0].scores
    assert all(s == PARTS[part_id].points for s in scores), scores
    # a part graded on a benchmark: the model earns (about) full credit on the graphs drawn
    # to check it too, far from failing the check
    assert not rows[0].failed_checks and all(gap > -0.02 for gap in rows[0].gaps), rows[0].gaps
    assert bool(rows[0].gaps) == bool(PARTS[part_id].checks())


def _bound(part_id: str, k: int):
    return PARTS[part_id].bind(seeds_for(f"spread secret {k}".encode(), [part_id], "a draw"))


def test_greedy_by_size_earns_partial_credit_on_the_memory_challenge():
    """Part 3's answer is not full marks in part 4 (it was before): the reference is the
    search planner, and greedy by size earns half of an instance's credit where the search
    does better."""
    from chipsim.passes.memory import MemoryPlan

    def greedy(records, alignment=64):
        from chipsim.passes.memory.planners import greedy_by_size

        plan = greedy_by_size(records, alignment=alignment)  # a learner's copy of it
        return MemoryPlan(records, dict(plan.offsets), alignment, "greedy")

    earned = []
    for k in range(2):  # 164 instances each
        part = _bound("memory_challenge", k)
        problems = {i.id: i.build() for i in part.hidden()}
        answers = {}
        for iid, obj in problems.items():
            records = obj if part.instance(iid).kind == "arena" else plan_records(obj)
            plan = greedy(records)
            answers[iid] = {"records": records_fingerprint(records),
                            "offsets": dict(plan.offsets)}  # fmt: skip
        score = score_answer(part, encode(part.id, answers), points=4, required=list(problems))
        earned.append(score.score)
        tight = [s for s in score.instances if s.instance.startswith("tight_h")]
        assert any(0.45 <= s.fraction <= 0.55 for s in tight), score.explain()
    assert all(1.0 <= e <= 3.5 for e in earned), earned


def test_one_kernel_for_everything_loses_on_the_visible_chains_and_says_why():
    """Part 2's second visible instance teaches the lesson the hidden ones grade: one kernel
    for everything is slower than the chains, and the feedback names the kernel, its tiles
    and the SRAM they take."""
    ns = notebook_namespace(ROOT / "solutions" / "fusion" / "fusion.ipynb")

    def everything(graph, chip):
        ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
        return ns["as_partition"](graph, [ops])

    answer = submit("fusion_chains", everything)
    chains_b = next(s for s in answer.provisional.instances if s.instance == "chains_b")
    assert chains_b.fraction == 0.0, chains_b.message
    assert "Your kernel fused_" in chains_b.message and "B of SRAM" in chains_b.message
    assert "row(s) at a time" in chains_b.message
    assert answer.provisional.score < PARTS["fusion_chains"].points


def test_fusing_too_little_is_told_to_fuse_more_not_less():
    """Chains without epilogues on the epilogue part: the feedback names the reference's
    larger kernel and says to fuse more (it used to say "fuse less" of a one-op matmul)."""
    ns = notebook_namespace(ROOT / "solutions" / "fusion" / "fusion.ipynb")
    answer = submit("fusion_epilogue", ns["fuse_chains"])  # part 2's answer (withheld: ours)
    lost = [s for s in answer.provisional.instances if s.fraction < 1.0]
    assert lost, "chains alone should lose credit on the epilogue part"
    for s in lost:
        assert "Fuse more there" in s.message and "fuse less" not in s.message, s.message
        assert "inside a larger kernel, fused_matmul" in s.message, s.message


def test_a_table_of_the_visible_answers_earns_nothing():
    """Visible instances are practice: an answer that knows only them (and fails on the
    rest) scores 0, where it kept the visible share before."""
    from grader.scoring.answer import graph_fingerprint
    from grader.scoring.references import baseline, built

    part = _bound("fusion_challenge", 0)
    answers = {}
    for inst in part.visible():
        graph = built(part.id, inst.id)
        groups = [list(g) for g in baseline(part.id, inst.id)["shown"].partition.groups]
        answers[inst.id] = {"graph": graph_fingerprint(graph), "groups": groups}
    for inst in part.hidden():
        answers[inst.id] = {"error": "KeyError: not in my table"}
    counted = [i.id for i in part.hidden()]
    score = score_answer(part, encode(part.id, answers), points=4, counted=counted)
    assert score.preview == 4.0  # full marks where the table knows the answers ...
    assert score.score == 0.0  # ... and nothing for the grade


def test_points_show_as_the_grade_has_them():
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import PartScore

    s = PartScore("fusion_challenge", 4.0, (InstanceScore("x", 0.87475, "m"),))
    assert s.score == 3.499
    assert s.explain().startswith("Part fusion_challenge: 3.499 / 4 points")


def test_a_reference_kernel_of_several_matmuls_is_said_to_go_beyond_part_1s_rule():
    """Part 1 teaches "matmul -> matmul: never"; the challenge's reference kernel on a
    transformer block can hold several matmuls, and "fuse more there" alone read to a new
    learner as a contradiction (their epilogue pass on a hidden block)."""
    from grader.problems.families import compile_with, transformer_variant
    from grader.scoring.diagnosis import slower_kernel
    from grader.scoring.epilogue import epilogue_fusion
    from grader.scoring.references import fusion_strategy, target_chip

    graph = transformer_variant(0, stratum=0)
    mine = compile_with(graph, epilogue_fusion(graph, target_chip()))
    said = slower_kernel(mine, compile_with(graph, fusion_strategy("reference", graph)))
    assert "inside a larger kernel, fused_matmul_matmul" in said, said
    assert "That kernel holds 3 matmuls or convs: part 1's rule never joins two" in said
    one = slower_kernel(mine, compile_with(graph, fusion_strategy("epilogue", graph)))
    assert "part 1's rule" not in one  # the same program: nothing to say
