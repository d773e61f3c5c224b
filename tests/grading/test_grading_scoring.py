"""Unit tests of scoring, without nbgrader: the formula, clipping, invalid answers."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipsim.hw import get_chip
from chipsim.i18n import use_language
from chipsim.passes.fusion import Partition, fuse_elementwise_chains, no_fusion
from chipsim.passes.memory import first_fit, greedy_by_size, liveness, naive
from grader import credit, encode, points_for, score_answer, submit
from grader.problems.hidden import seeds_for
from grader.problems.parts import PARTS as UNBOUND
from grader.problems.parts import strategy_title
from grader.scoring.answer import MIME, graph_fingerprint
from grader.scoring.checks import score_instance
from grader.scoring.epilogue import epilogue_fusion
from grader.scoring.partscore import PartScore
from grader.scoring.references import built

#: The hidden instances' seeds under a test secret (a course's come from its own secret).
SEEDS = seeds_for(b"the scoring tests' secret", UNBOUND, "a submission")
PARTS = {pid: part.bind(SEEDS) for pid, part in UNBOUND.items()}


def test_credit_formula_and_clipping():
    assert credit(150, 100, 200) == 0.5
    assert credit(100, 100, 200) == 1.0 and credit(50, 100, 200) == 1.0
    assert credit(200, 100, 200) == 0.0 and credit(300, 100, 200) == 0.0
    # a reference no better than naive: only matching it counts
    assert credit(100, 100, 100) == 1.0 and credit(101, 100, 100) == 0.0


@given(st.floats(-5, 5) | st.just(float("nan")), st.sampled_from([1, 2, 3, 4, 0.5]))
def test_points_never_exceed_the_cell_and_are_plain_floats(fraction, points):
    p = points_for(fraction, points)
    assert type(p) is float and 0.0 <= p <= points


def test_points_round_down():
    assert points_for(2 / 3, 3) == 2.0
    assert points_for(0.99999, 4) == 3.999
    assert points_for(float("nan"), 4) == 0.0


def _fusion_answer(part_id: str, instance_id: str, partition: Partition) -> dict:
    graph = built(part_id, instance_id)
    return {"graph": graph_fingerprint(graph), "groups": [list(g) for g in partition.groups]}


def test_reference_answer_gets_full_credit_and_naive_none():
    part = PARTS["fusion_chains"]
    inst = part.instance("chains_a")
    g = built(part.id, inst.id)
    best = score_instance(part, inst, _fusion_answer(part.id, inst.id, fuse_elementwise_chains(g)))
    worst = score_instance(part, inst, _fusion_answer(part.id, inst.id, no_fusion(g)))
    assert best.fraction == 1.0 and worst.fraction == 0.0
    assert best.numbers["theirs"] == best.numbers["reference"] < best.numbers["naive"]
    assert "reference" in best.message and "naive" in best.message


def test_invalid_partitions_score_zero():
    part = PARTS["fusion_chains"]
    inst = part.instance("chains_a")
    g = built(part.id, inst.id)
    ops = [i for i, n in enumerate(g.nodes) if n.op != "constant"]
    fp = graph_fingerprint(g)
    bad = {
        "missing node": {"graph": fp, "groups": [ops[:-1]]},
        "non-convex": {"graph": fp, "groups": [[ops[0], ops[-1]], ops[1:-1]]},
        "malformed": {"graph": fp, "groups": "all of them"},
        "constant in a group": {"graph": fp, "groups": [list(range(len(g.nodes)))]},
    }
    for why, answer in bad.items():
        s = score_instance(part, inst, answer)
        assert s.fraction == 0.0, why
        assert "invalid answer" in s.message, why


def test_answer_for_a_different_graph_scores_zero():
    part = PARTS["fusion_chains"]
    other = built(part.id, "chains_h1", SEEDS["chains_h1"])
    answer = {
        "graph": graph_fingerprint(other),
        "groups": [list(p) for p in no_fusion(other).groups],
    }
    s = score_instance(part, part.instance("chains_a"), answer)
    assert s.fraction == 0.0 and "different graph" in s.message


def test_overlapping_plan_scores_zero_and_names_the_tensors():
    part = PARTS["memory_greedy"]
    inst = part.instance("random_40")
    records = built(part.id, inst.id)
    from grader.scoring.answer import records_fingerprint

    answer = {"records": records_fingerprint(records), "offsets": {r.id: 0 for r in records}}
    s = score_instance(part, inst, answer)
    assert s.fraction == 0.0 and "overlap" in s.message


def test_plan_scores_follow_the_arena_formula():
    part = PARTS["memory_greedy"]
    inst = part.instance("random_40")
    records = built(part.id, inst.id)
    from grader.scoring.answer import records_fingerprint

    def score(plan):
        answer = {"records": records_fingerprint(records), "offsets": dict(plan.offsets)}
        return score_instance(part, inst, answer)

    ref, ff, nv = score(greedy_by_size(records)), score(first_fit(records)), score(naive(records))
    assert ref.fraction == 1.0 and nv.fraction == 0.0
    a, r, n = (ff.numbers[k] for k in ("theirs", "reference", "naive"))
    assert ff.fraction == pytest.approx((n - a) / (n - r))
    assert ref.numbers["lower_bound"] <= ref.numbers["theirs"]


def test_liveness_and_first_fit_are_exact():
    part = PARTS["memory_liveness"]
    graph, order = built(part.id, "live_a")
    truth = liveness(graph, [graph.nodes[i] for i in order])
    rows = [[r.id, r.size, r.first, r.last] for r in truth]
    fp = graph_fingerprint(graph)
    full = score_instance(part, part.instance("live_a"), {"graph": fp, "records": rows})
    rows[0][3] += 1
    off_by_one = score_instance(part, part.instance("live_a"), {"graph": fp, "records": rows})
    assert full.fraction == 1.0
    assert off_by_one.fraction == pytest.approx((len(rows) - 1) / len(rows))


def test_classify_gives_credit_per_item_beyond_a_constant_guess():
    ans = submit("fusion_patterns", lambda op: "elementwise", lambda p, c: False, score=False)
    s = score_answer(PARTS["fusion_patterns"], ans.doc, points=2, required=["items_a"])
    # exp is elementwise; of the 6 visible pairs, C->C, R->R and O->E may not fuse
    assert s.instances[0].message.startswith("4 of 11 items right")
    assert s.score == 0.0  # ... which is what guessing gets


@pytest.mark.parametrize("pattern", ["elementwise", "broadcast", "reduction", "opaque"])
@pytest.mark.parametrize("fuses", [True, False])
def test_a_constant_answer_earns_nothing_on_any_instance(grader_gives, pattern, fuses):
    part = PARTS["fusion_patterns"]
    grader_gives([part])
    ans = submit(part.id, lambda op: pattern, lambda p, c: fuses, hidden=True, score=False)
    s = score_answer(part, ans.doc, points=2)
    assert s.score == 0.0 and all(i.fraction == 0.0 for i in s.instances), s.explain()


def test_classify_pays_for_each_half_that_is_known():
    from chipsim.ir.ops import Pattern, get_op
    from chipsim.passes.fusion import can_fuse
    from grader.scoring.checks import _always_fuses

    table = {(p, c): _always_fuses(can_fuse, p, c) for p in Pattern for c in Pattern}

    def pattern_of(op):
        return get_op(op).pattern

    def may_fuse(p, c):  # the rule as a table written out (can_fuse itself is withheld)
        return table[p, c]

    part = PARTS["fusion_patterns"]
    full = score_answer(part, submit(part.id, pattern_of, may_fuse, score=False).doc, points=2,
                        required=["items_a"])  # fmt: skip
    assert full.score == 2.0
    half = submit(part.id, pattern_of, lambda p, c: True, score=False)
    s = score_answer(part, half.doc, points=2, required=["items_a"])
    assert s.instances[0].fraction == pytest.approx(5 / 11)  # the 5 patterns, no pair


def test_missing_malformed_and_misdirected_answers_score_zero():
    part = PARTS["fusion_chains"]
    assert score_answer(part, "not json", points=3).score == 0.0
    assert score_answer(part, {"format": "x"}, points=3).score == 0.0
    wrong_part = encode("fusion_epilogue", {})
    assert "for part" in score_answer(part, wrong_part, points=3).instances[0].message
    s = score_answer(part, encode(part.id, {}), points=3)
    assert s.score == 0.0 and len(s.instances) == len(part.instances)


def test_learner_errors_are_recorded_per_instance_not_raised(grader_gives):
    grader_gives([PARTS["fusion_chains"]])  # as the grader gives them to a kernel

    def broken(graph, chip):
        raise NotImplementedError("fuse_chains")

    ans = submit("fusion_chains", broken, hidden=True, score=True)
    assert set(ans.doc["answers"]) == {i.id for i in PARTS["fusion_chains"].instances}
    assert all("NotImplementedError" in a["error"] for a in ans.doc["answers"].values())
    assert ans.provisional.score == 0.0
    bundle = ans._repr_mimebundle_()
    json.dumps(bundle[MIME])  # the answer is plain JSON data
    assert "Provisional score" in bundle["text/plain"]


def test_grader_epilogue_reference_beats_no_fusion_on_its_instances():
    chip = get_chip("edge-npu")
    from grader.scoring.references import baseline

    for inst in PARTS["fusion_epilogue"].instances:
        g = built("fusion_epilogue", inst.id, inst.seed)
        epilogue_fusion(g, chip)  # valid by construction: compiles in baseline()
        b = baseline("fusion_epilogue", inst.id, inst.seed)
        assert b["reference"] < b["naive"], inst.id


@pytest.mark.parametrize("instance_id", ["sram_transformer", "sram_transformer_h1"])
def test_a_fast_but_wrong_plan_scores_zero_on_both_lines_of_defence(monkeypatch, instance_id):
    """Every tensor at offset 0: the arena shrinks into SRAM, so the program would run faster
    than the reference, but live tensors overwrite each other. The validator refuses it; with
    the validator switched off, the numerical check still refuses it."""
    import chipsim.compiler.lowering
    import chipsim.passes.memory
    from chipsim.passes.memory import MemoryPlan
    from grader.problems.families import compile_with
    from grader.problems.parts import ALIGNMENT
    from grader.scoring.answer import records_fingerprint
    from grader.scoring.references import baseline

    part = PARTS["memory_challenge"]
    inst = part.instance(instance_id)
    base = baseline(part.id, inst.id, inst.seed)
    records, graph = base["records"], built(part.id, inst.id, inst.seed)
    squeezed = {r.id: 0 for r in records}
    answer = {"records": records_fingerprint(records), "offsets": squeezed}

    first = score_instance(part, inst, answer)
    assert first.fraction == 0.0 and first.invalid
    assert "overlap" in first.message and "live at step" in first.message

    for module in (chipsim.compiler.lowering, chipsim.passes.memory):  # no validator from here on
        monkeypatch.setattr(module, "validate_plan", lambda plan: plan)
    fast = compile_with(graph, plan=MemoryPlan(tuple(records), squeezed, ALIGNMENT, "squeezed"))
    assert fast.report.cycles < base["reference"]  # it *would* beat the reference ...
    second = score_instance(part, inst, answer)
    assert second.fraction == 0.0 and second.invalid  # ... but its outputs are wrong
    assert "not numerically equivalent" in second.message


def test_numerical_check_passes_a_valid_answer_and_names_the_wrong_output():
    from grader.problems.families import compile_with
    from grader.scoring.equivalence import mismatch

    g = built("fusion_chains", "chains_a")
    program = compile_with(g, fuse_elementwise_chains(g))
    assert mismatch(g, program) == ""

    class Garbled:  # a program whose last output is off by one everywhere
        def run(self, *args):
            outs, report = program.run(*args)
            return [o + (k == len(outs) - 1) for k, o in enumerate(outs)], report

    assert f"output {len(g.outputs) - 1} differs" in mismatch(g, Garbled())


def test_liveness_feedback_shows_the_expected_record_and_yours():
    part = PARTS["memory_liveness"]
    graph, order = built(part.id, "live_a")
    rows = [
        [r.id, r.size, r.first, r.last] for r in liveness(graph, [graph.nodes[i] for i in order])
    ]
    fp = graph_fingerprint(graph)
    rid, size, first, last = rows[1]
    rows[1][3] = last + 2
    s = score_instance(part, part.instance("live_a"), {"graph": fp, "records": rows})
    assert f"{rid}: expected {size} B live [{first}, {last})" in s.message
    assert f"yours {size} B live [{first}, {last + 2})" in s.message
    # the message says what an interval means, with this schedule's number of steps
    assert "last is one past the step of its last reader" in s.message
    assert f"for a graph output the number of steps, {len(order)})" in s.message
    del rows[1]
    s = score_instance(part, part.instance("live_a"), {"graph": fp, "records": rows})
    assert f"yours has no record {rid}" in s.message


def test_the_explanation_states_the_line_the_credit_was_read_from():
    """A challenge's credit bends at its baseline and is full within the slack: the message
    and the formula say so, never "of the way from naive to the reference" for another line."""
    from grader.scoring.answer import records_fingerprint

    part = PARTS["memory_challenge"]
    records = built(part.id, "tight_40")
    plan = greedy_by_size(records)  # the baseline itself: half credit
    answer = {"records": records_fingerprint(records), "offsets": dict(plan.offsets)}
    scored = score_answer(part, encode(part.id, {"tight_40": answer}), points=4,
                          required=["tight_40"])  # fmt: skip
    (only,) = scored.instances
    assert only.fraction == 0.5, only.message
    assert "the same as greedy by size: 50% credit" in only.message
    text = scored.explain()
    assert "50% at greedy by size, 100% at the full-credit line" in text
    assert "full-credit line = reference x 1.06" in text
    assert "(naive - reference)" not in text

    fusion = PARTS["fusion_challenge"]
    graph = built(fusion.id, "transformer")
    answer = _fusion_answer(fusion.id, "transformer", fuse_elementwise_chains(graph))
    scored = score_answer(fusion, encode(fusion.id, {"transformer": answer}), points=4,
                          required=["transformer"])  # fmt: skip
    (only,) = scored.instances
    assert 0 < only.fraction < 1, only.message
    assert f"{only.fraction:.1%} of the way from naive to the full-credit line (" in only.message
    assert "(naive - full-credit line)" in scored.explain()


def test_the_words_follow_the_line_where_the_baseline_does_not_bend_it():
    """The baseline earns half only where it is worse than full credit and better than naive;
    otherwise the message says what it earns and reads the straight line."""
    from grader.scoring.timed import timed

    part = PARTS["memory_challenge"]
    inst = part.instance("tight_40")
    near = timed(part, inst, 1200, {"reference": 1000, "naive": 2000, "baseline": 1000},
                  "bytes", None)  # fmt: skip
    assert "(earns 100%)" in near.message and "on the line" not in near.message
    flat = timed(part, inst, 1200, {"reference": 1000, "naive": 1500, "baseline": 1500},
                  "bytes", None)  # fmt: skip
    assert flat.fraction == pytest.approx((1500 - 1200) / (1500 - 1060))
    assert "of the way from naive to the full-credit line (at most 1,060)" in flat.message
    bent = timed(part, inst, 1100, {"reference": 1010, "naive": 2000, "baseline": 1200},
                  "bytes", None)  # fmt: skip
    assert "the full-credit line (at most 1,070)" in bent.message  # 1,070.6: 1,071 is not full
    # without a slack (the instruction-generation challenge) there is no full-credit line to
    # name: a new learner read "the full-credit line" and "that good itself" as a slack
    gen = PARTS["instgen_challenge"]
    assert gen.slack == 0 and gen.baseline
    base = {"reference": 1000, "naive": 2000, "baseline": 1500}
    upper = timed(gen, gen.instance("conv_a"), 1100, base, "cycles", None)
    # the baseline is named in words, the naive program too (a learner read "single" as an
    # untranslated word, and "naive 414,084" without knowing which program that was)
    assert "between the single-buffered program (50%) and the reference (1,000)" in upper.message
    assert "naive 2,000 (16 x 16 x 16 tiles)" in upper.message, upper.message
    said = PartScore(
        "instgen_challenge", 4.0, (upper,), language="en", slack=gen.slack,
        baseline=strategy_title(gen.baseline),
    ).explain()  # fmt: skip
    assert "full-credit line" not in said and "where it matches the reference itself" in said
    assert "50% at the single-buffered program" in said
    with use_language("zh_CN"):
        zh = timed(gen, gen.instance("conv_a"), 1100, base, "cycles", None).message
    assert "介于单缓冲程序（50%）与参考解" in zh and "single" not in zh, zh


def test_the_words_say_when_an_answer_is_the_baseline_or_the_instance_separates_nothing():
    """A learner read "between naive (0%) and greedy_by_size (50%)" for an arena exactly
    greedy's, and "full credit" for no fusion where the reference was slower than no fusion
    (the part says none at no fusion): the words now say what happened."""
    from grader.scoring.timed import timed

    part = PARTS["memory_challenge"]
    inst = part.instance("tight_40")
    same = timed(part, inst, 1500, {"reference": 1000, "naive": 2000, "baseline": 1500},
                  "bytes", None)  # fmt: skip
    assert same.fraction == 0.5
    assert "the same as greedy by size: 50% credit" in same.message
    assert "between" not in same.message
    chains = PARTS["fusion_chains"]
    naive = timed(chains, chains.instance("chains_a"), 1000, {"reference": 1010, "naive": 1000},
                   "cycles", None)  # fmt: skip
    assert naive.fraction == 1.0
    assert "reference is no faster than naive" in naive.message
    fair = timed(chains, chains.instance("chains_a"), 900, {"reference": 900, "naive": 1000},
                  "cycles", None)  # fmt: skip
    assert "no faster than naive" not in fair.message


def test_an_explanation_lists_the_least_credit_and_sums_up_the_rest_of_many_instances():
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import LISTED, PartScore

    # 96 counted instances, credit falling with the index; one invalid among the best
    hidden = [InstanceScore(f"dense_h{k}", 1 - k / 200, f"m{k}") for k in range(96)]
    hidden[3] = InstanceScore("dense_h3", 0.0, "not numerically equivalent", invalid=True)
    visible = InstanceScore("dense_small", 0.5, "v")
    score = PartScore("fusion_epilogue", 3.0, (visible, *hidden), language="en",
                      counted=tuple(s.instance for s in hidden))  # fmt: skip
    text = score.explain()
    listed = [line for line in text.splitlines() if line.startswith("  - dense_h")]
    assert len(listed) == LISTED < 96
    assert listed[0].startswith("  - dense_h3: 0.0% credit")  # the invalid one first
    assert listed[1].startswith("  - dense_h95:") and listed[-1].startswith("  - dense_h85:")
    assert f"the {LISTED} with the least credit" in text
    everything = [InstanceScore(f"dense_h{k}", 1.0, f"m{k}") for k in range(96)]
    full = PartScore("fusion_epilogue", 3.0, (visible, *everything), language="en",
                     counted=tuple(s.instance for s in everything)).explain()  # fmt: skip
    assert "with the least credit" not in full  # a new learner read it as "you lost here"
    assert f"the other {96 - LISTED}: full credit each" in full  # not "100.0% to 100.0%"
    said = f"96 hidden instances, drawn for this submission, every one at full credit; {LISTED}"
    assert said in full
    rest = [s.fraction for s in hidden[:85] if s.instance != "dense_h3"]
    assert (f"the other {len(rest)}: {min(rest):.1%} to {max(rest):.1%} credit each, 1 of them "
            "full credit") in text  # fmt: skip
    assert "  - dense_small: 50.0% credit" in text  # the visible one still shown

    # one error on every graph: one line for the listed, one credit for the rest (a walk read
    # "NotImplementedError" twelve times, then "0.0% to 0.0% credit each, 0 of them full")
    blank = [InstanceScore(f"dense_h{k}", 0.0, "NotImplementedError: fits") for k in range(96)]
    none = PartScore("fusion_epilogue", 3.0, (visible, *blank), language="en",
                     counted=tuple(s.instance for s in blank)).explain()  # fmt: skip
    lines = [line for line in none.splitlines() if line.startswith("  - dense_h")]
    assert lines == [f"  - dense_h0 and {LISTED - 1} more: 0.0% credit each. "
                     "NotImplementedError: fits"]  # fmt: skip
    assert f"the other {96 - LISTED}: 0.0% credit each" in none and "0.0% to" not in none
    zh = PartScore("fusion_epilogue", 3.0, (visible, *blank), language="zh_CN",
                   counted=tuple(s.instance for s in blank)).explain()  # fmt: skip
    assert "dense_h0 及另外" in zh and "0.0% to" not in zh

    # three short of full among many: only they are listed, not nine full ones beside them
    three = [InstanceScore(f"dense_h{k}", 1.0 if k >= 3 else 0.5, f"m{k}") for k in range(96)]
    some = PartScore("fusion_epilogue", 3.0, (visible, *three), language="en",
                     counted=tuple(s.instance for s in three)).explain()  # fmt: skip
    assert sum(line.startswith("  - dense_h") for line in some.splitlines()) == 3
    assert "96 hidden instances, drawn for this submission; 3 below full credit:" in some
    assert "least credit" not in some and "the other 93: full credit each" in some

    few = PartScore("fusion_challenge", 4.0, (visible, *hidden[:8]), language="en",
                    counted=tuple(s.instance for s in hidden[:8]))  # fmt: skip
    assert sum(line.startswith("  - dense_h") for line in few.explain().splitlines()) == 8
    assert "the other" not in few.explain() and "least credit" not in few.explain()


def test_each_kind_of_hidden_instance_weighs_the_same_whatever_its_count():
    """A kind of instance cheap to draw is drawn often, to steady the grade, without
    outweighing the others: the memory challenge's tight arenas and scratchpad blocks count
    for half each, as its notebook says, and the explanation says how each kind did."""
    from grader.problems.parts import HIDDEN_PER_FAMILY
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import PartScore

    part = PARTS["memory_challenge"]
    families = part.families()
    assert set(families.values()) == {"sram_transformer_h", "tight_h"}
    assert [families[i.id] for i in part.hidden()].count("tight_h") == HIDDEN_PER_FAMILY["tight"]
    assert HIDDEN_PER_FAMILY["tight"] > HIDDEN_PER_FAMILY["plan"]
    assert not any(i.id in families for i in part.visible())  # each its own

    blocks = [InstanceScore(i.id, 1.0, "") for i in part.hidden() if "sram" in i.id]
    arenas = [InstanceScore(i.id, 0.5, "") for i in part.hidden() if "tight" in i.id]
    visible = [InstanceScore(i.id, f, "") for i, f in zip(part.visible(), (1.0, 0.0), strict=True)]
    score = PartScore(part.id, 4.0, (*visible, *blocks, *arenas), language="en",
                      counted=tuple(i.id for i in part.hidden()), families=families)  # fmt: skip
    assert score.score == 3.0  # (1 + 0.5) / 2, not (4 + 0.5 x 160) / 164
    assert score.preview == 2.0  # the two visible instances, one each
    text = score.explain()
    assert "Each kind of hidden instance weighs the same" in text
    assert f"tight_h…: {len(arenas)} instances, 50.0% credit" in text
    assert f"sram_transformer_h…: {len(blocks)} instances, 100.0% credit" in text
    chinese = PartScore(part.id, 4.0, (*blocks, *arenas), language="zh_CN",
                        counted=tuple(i.id for i in part.hidden()), families=families)  # fmt: skip
    assert f"tight_h…：{len(arenas)} 个实例，得分比例 50.0%" in chinese.explain()
    nearly = [InstanceScore(s.instance, 1.0, "") for s in arenas[1:]]
    almost = PartScore(part.id, 4.0, (*blocks, arenas[0], *nearly), language="en",
                       families=families)  # fmt: skip
    mean = 1 - 0.5 / len(arenas)  # shown rounded down, never up to full credit
    kind = next(x for x in almost.explain().splitlines() if x.startswith("  - tight_h…"))
    assert (
        kind
        == f"  - tight_h…: {len(arenas)} instances, {math.floor(mean * 1000) / 1000:.1%} credit"
    )
    assert f"{mean:.1%}" != f"{math.floor(mean * 1000) / 1000:.1%}"  # the test can tell them apart

    # a part whose kinds are drawn equally often scores as the plain mean
    greedy = PARTS["memory_greedy"]
    mixed = [InstanceScore(i.id, float(k % 3 == 0), "") for k, i in enumerate(greedy.hidden())]
    plain = PartScore(greedy.id, 3.0, tuple(mixed), language="en", families=greedy.families())
    assert plain.fraction == pytest.approx(sum(s.fraction for s in mixed) / len(mixed))


@pytest.mark.parametrize("where", ["solutions", "exercises"])
def test_the_memory_notebook_states_how_many_instances_of_each_kind_and_their_weights(where):
    """What the notebook tells a learner about part 4's grade is what the grader does: how
    many instances of each kind it draws, and that each kind counts for half."""
    import nbformat

    from grader.problems.parts import HIDDEN_PER_FAMILY as H
    from grader.scoring.spread import ROOT

    nb = nbformat.read(ROOT / where / "memory_planning" / "memory_planning.ipynb", as_version=4)
    part4 = next(c.source for c in nb.cells if c.source.startswith("## Part 4"))
    words = " ".join(part4.split())
    total = H["plan"] + H["tight"]
    assert f"{H['plan']} transformer blocks and {H['tight']} tight arenas" in words
    assert f"All {total} run" in words and "counts for half" in words
    assert f"{H['plan']} 个 Transformer 模块和 {H['tight']} 个紧凑的内存池" in part4
    assert f"全部 {total} 个实例" in part4 and "各占这一部分分数的一半" in part4


@pytest.mark.parametrize("where", ["solutions", "exercises"])
def test_the_fusion_notebook_states_how_many_instances_of_each_kind_and_their_weights(where):
    """As for the memory notebook: the fusion challenge's benchmark (its counts of
    transformer blocks and CNNs), the graphs drawn to check it and the check's margin, in both
    languages, are the grader's, and each kind counts for half."""
    import nbformat

    from grader.problems.parts import HIDDEN_PER_FAMILY as H
    from grader.scoring.partscore import CHECK_MARGIN
    from grader.scoring.spread import ROOT

    part = PARTS["fusion_challenge"]
    assert sorted(set(part.families().values())) == ["cnn", "transformer"]
    nb = nbformat.read(ROOT / where / "fusion" / "fusion.ipynb", as_version=4)
    part4 = next(c.source for c in nb.cells if c.source.startswith("## Part 4"))
    words = " ".join(part4.split())
    bench, checks = H["transformer"] + H["cnn"], H["transformer_check"] + H["cnn_check"]
    assert sum(i.benchmark for i in part.graded()) == len(part.graded()) == bench
    assert len(part.checks()) == checks and len(part.hidden()) == bench + checks
    margin = round(CHECK_MARGIN * 100)
    assert f"{H['transformer']} transformer blocks and {H['cnn']} small CNNs, the same" in words
    assert f"{H['transformer_check']} blocks and {H['cnn_check']} CNNs drawn anew" in words
    assert f"more than {margin} percentage points less" in words
    assert f"All {bench + checks} run" in words and "counts for half" in words
    bench_zh = f"{H['transformer']} 个 Transformer 模块和 {H['cnn']} 个小型 CNN，每次提交都相同"
    assert bench_zh in part4
    assert f"{H['transformer_check']} 个 Transformer 模块和 {H['cnn_check']} 个 CNN" in part4
    assert f"低 {margin} 个百分点以上" in part4
    assert f"全部 {bench + checks} 个实例" in part4 and "各占这一部分分数的一半" in part4


def test_a_credit_is_shown_rounded_down_everywhere_on_its_line():
    """A walk read "50.0% credit ... between naive (0%) and the single-buffered program (50%)"
    for a result a few cycles short of the 50% mark: a credit is shown rounded down, in the
    explanation's line and in the instance's own sentence alike, as the points are."""
    from grader.scoring.timed import timed

    part = next(p for p in UNBOUND.values() if not p.slack and not p.baseline)
    inst = part.instances[0]
    score = timed(part, inst, 2001, {"reference": 0, "naive": 4000}, "cycles", ())
    assert score.fraction == pytest.approx(0.49975)
    line = PartScore(part.id, 3.0, (score,)).explain()
    assert "49.9% credit" in line and "49.9% of the way" in line and "50.0%" not in line


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_a_benchmark_part_says_where_its_points_come_from_and_how_the_check_went(language):
    """The fusion challenge counts a benchmark and checks it on graphs drawn for the
    submission: the explanation says which graphs the points came from, how the drawn ones
    did against the benchmark and the margin; past the margin the drawn graphs count, and
    the explanation says so first."""
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import CHECK_MARGIN, PartScore

    def scored(drawn_credit: float) -> PartScore:
        bench = tuple(InstanceScore(f"cnn_b{k}", 0.8, f"m{k}") for k in range(16))
        drawn = tuple(InstanceScore(f"cnn_h{k}", drawn_credit, f"d{k}") for k in range(8))
        ids = tuple(s.instance for s in (*bench, *drawn))
        return PartScore("fusion_challenge", 4.0, (InstanceScore("cnn", 0.5, "v"), *bench, *drawn),
                         language=language, counted=ids, checked=ids[16:],
                         families=dict.fromkeys(ids, "cnn"))  # fmt: skip

    margin = round(CHECK_MARGIN * 100)
    ok = scored(0.8 - CHECK_MARGIN + 0.05)
    assert not ok.failed_check and ok.score == 3.2  # the benchmark's 80%
    text = " ".join(ok.explain().split())
    failed = scored(0.8 - CHECK_MARGIN - 0.05)
    assert failed.failed_check and failed.score == 2.0  # the drawn graphs' 50%
    lost = " ".join(failed.explain().split())
    if language == "en":
        assert "Graded on 16 hidden instances, those of the benchmark (the same for" in text
        assert "Checked on 8 graphs drawn for this submission: 60.0% credit, against 80.0% on " \
               f"the benchmark (the drawn graphs are graded instead only when they earn more " \
               f"than {margin} percentage points less)" in text  # fmt: skip
        assert lost.index("Your pass earns 50.0% credit on 8 graphs drawn") < lost.index(
            "Graded on 8 hidden instances, drawn for this submission"
        )
        assert "graded on the drawn graphs, not the benchmark" in lost and "Checked" not in lost
    else:
        assert "按基准测试（每次提交都相同）的 16 个隐藏实例评分" in text
        assert f"只有当抽取的图的得分比例比基准测试低 {margin} 个百分点以上时" in text
        assert "按为这次提交抽取的 8 个隐藏实例评分" in lost
        assert f"低了 {margin} 个百分点以上，所以这一部分改按抽取的图评分" in lost


def test_an_invalid_answer_on_a_drawn_graph_is_named_as_the_reason_not_a_margin():
    """A benchmark part fails its check on an invalid answer there, whatever the credits: the
    explanation says that, not a margin the credits may not show."""
    from grader.scoring.credit import InstanceScore
    from grader.scoring.partscore import PartScore

    bench = tuple(InstanceScore(f"cnn_b{k}", 0.2, f"m{k}") for k in range(4))
    drawn = (InstanceScore("cnn_h1", 0.0, "overlapping groups", invalid=True),)
    ids = tuple(s.instance for s in (*bench, *drawn))
    score = PartScore("fusion_challenge", 4.0, (*bench, *drawn), language="en", counted=ids,
                      checked=("cnn_h1",), families=dict.fromkeys(ids, "cnn"))  # fmt: skip
    text = " ".join(score.explain().split())
    assert score.failed_check and score.score == 0.0
    assert "An answer on a graph drawn for this submission is invalid" in text
    assert "percentage points less" not in text
