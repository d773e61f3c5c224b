"""Hidden instances come from a secret only the grader holds (grader.problems.hidden)."""

from __future__ import annotations

import json
import os
import re
import threading

import pytest

from grader import instances, submit
from grader.problems import families, kernels
from grader.problems.data import HIDDEN_FILE_ENV
from grader.problems.hidden import load_secret, seeds_for, submission_key
from grader.problems.part import HiddenInstanceError
from grader.problems.parts import CHALLENGE_SLACK, PARTS
from grader.scoring.answer import graph_fingerprint, records_fingerprint

HIDDEN = [(pid, inst) for pid, part in PARTS.items() for inst in part.instances if inst.hidden]
#: The hidden instances drawn for each submission (all but the fusion challenge's benchmark).
DRAWN = [(pid, inst) for pid, inst in HIDDEN if not inst.benchmark]
#: Instance k of a family draws stratum k of its table, cycling, and no table has more than
#: this many rows: a family's first instances cover all of its strata, and the tests that build
#: each instance many times build those (the rest repeat a stratum already built; the skinny
#: kernels' later passes also take other row counts, kernels.ROW_STEPS).
STRATA_ROWS = 6
REPRESENTATIVE = [
    (pid, inst) for pid, inst in HIDDEN if int(re.search(r"(\d+)$", inst.id)[1]) <= STRATA_ROWS
]


def test_the_representative_instances_cover_every_stratum():
    tables = [getattr(m, n) for m in (families, kernels) for n in dir(m) if n.endswith("_STRATA")]
    assert len(tables) >= 10 and max(len(t) for t in tables) <= STRATA_ROWS
    prefixes = {re.sub(r"\d+$", "", inst.id) for _, inst in HIDDEN}
    assert prefixes == {re.sub(r"\d+$", "", inst.id) for _, inst in REPRESENTATIVE}


def _fingerprint(obj) -> str:
    """A fingerprint of any instance: graph, (graph, schedule), records or items."""
    if isinstance(obj, tuple):
        return graph_fingerprint(obj[0]) + str(obj[1])
    if isinstance(obj, dict):
        return json.dumps(obj, sort_keys=True)
    if isinstance(obj, list):
        return records_fingerprint(obj)
    return graph_fingerprint(obj)


def _structure(obj) -> str:
    """What an answer depends on: ops and shapes, the inputs' too (a dense kernel's inner
    dimension shows only there), not the weights' values."""
    if isinstance(obj, tuple):
        obj = obj[0]
    if hasattr(obj, "nodes"):
        inputs = [tuple(v.type.shape) for v in obj.inputs]
        return str(
            [inputs, *((n.op, tuple(n.output.type.shape), sorted(n.attrs)) for n in obj.nodes)]
        )
    return _fingerprint(obj)


def test_the_package_alone_cannot_build_a_hidden_instance(monkeypatch):
    monkeypatch.delenv(HIDDEN_FILE_ENV, raising=False)
    assert DRAWN and all(inst.seed is None for _, inst in DRAWN)
    for _, inst in DRAWN:
        with pytest.raises(HiddenInstanceError, match="grader's secret"):
            inst.build()
    with pytest.raises(HiddenInstanceError, match="only while your notebook is graded"):
        instances("fusion_challenge", hidden=True)
    with pytest.raises(HiddenInstanceError):
        submit("fusion_chains", lambda g, c: None, hidden=True, score=False)


def test_course_runs_and_submissions_differ_and_a_regrade_is_deterministic():
    """Another course run draws other instances, and so does another submission in the same
    run: what one grading shows a learner does not answer the next."""
    a = seeds_for(b"course run A" * 3, PARTS, "notebook 1")
    b = seeds_for(b"course run B" * 3, PARTS, "notebook 1")
    c = seeds_for(b"course run A" * 3, PARTS, "notebook 2")
    assert a == seeds_for(b"course run A" * 3, PARTS, "notebook 1")
    for pid, inst in REPRESENTATIVE:
        if inst.benchmark:
            continue
        one = _fingerprint(PARTS[pid].bind(a).instance(inst.id).build())
        again = _fingerprint(PARTS[pid].bind(a).instance(inst.id).build())
        other = _fingerprint(PARTS[pid].bind(b).instance(inst.id).build())
        next_one = _fingerprint(PARTS[pid].bind(c).instance(inst.id).build())
        assert one == again and one != other and one != next_one, inst.id


def test_the_fusion_challenge_counts_a_benchmark_the_same_for_every_submission():
    """The fusion challenge's points come from a benchmark whose seeds are in the package: the
    same graphs under any secret and for any notebook (so the same pass earns the same points),
    and the graphs that check it are drawn per submission like every other part's."""
    part = PARTS["fusion_challenge"]
    bench, checks = [i for i in part.graded() if i.benchmark], part.checks()
    assert len(bench) == len(part.graded()) >= 16 and len(checks) >= 8
    assert not any(i.benchmark for i in checks) and not any(i.check for i in bench)
    a = seeds_for(b"course run A" * 3, ["fusion_challenge"], "notebook 1")
    b = seeds_for(b"course run B" * 3, ["fusion_challenge"], "notebook 2")
    assert set(a) == {i.id for i in checks}  # no seed is drawn for the benchmark
    for inst in bench[:4] + bench[-4:]:  # each stratum of both kinds
        under_a = _fingerprint(part.bind(a).instance(inst.id).build())
        assert (
            under_a
            == _fingerprint(part.bind(b).instance(inst.id).build())
            == _fingerprint(inst.build())
        ), inst.id
    for inst in checks[:2]:
        one = _fingerprint(part.bind(a).instance(inst.id).build())
        assert one != _fingerprint(part.bind(b).instance(inst.id).build()), inst.id
    assert {i.family for i in bench} == {i.family for i in checks} == {"transformer", "cnn"}


def test_a_table_prepared_for_the_benchmark_is_graded_on_the_drawn_graphs():
    """Anyone can build the benchmark and solve it offline with the reference passes; the
    graphs drawn for the submission have no entry in such a table. Here the table holds the
    reference's answers (full credit on the benchmark) and falls back to one kernel per op
    (no credit): the part is graded on the drawn graphs, and says why."""
    from grader.problems.families import reference_partition
    from grader.scoring.answer import encode
    from grader.scoring.grade import score_answer

    seeds = seeds_for(b"a course secret!", ["fusion_challenge"], "a notebook")
    part = PARTS["fusion_challenge"].bind(seeds)
    answers = {}
    for inst in part.hidden():
        graph = inst.build()
        if inst.benchmark:
            groups = [list(g) for g in reference_partition(graph).groups]
        else:
            groups = [[i] for i, n in enumerate(graph.nodes) if n.op != "constant"]
        answers[inst.id] = {"graph": graph_fingerprint(graph), "groups": groups}
    ids = [i.id for i in part.hidden()]
    score = score_answer(part, encode(part.id, answers), points=4, required=ids, counted=ids)
    bench = [s for s in score.instances if s.instance in {i.id for i in part.graded()}]
    assert min(s.fraction for s in bench) == 1.0  # the table is perfect on the benchmark
    assert score.failed_check and score.score == 0.0
    assert {s.instance for s in score.counted_scores()} == {i.id for i in part.checks()}
    text = " ".join(score.explain().split())
    assert "graded on the drawn graphs, not the benchmark" in text and "drawn for this" in text


def test_the_submission_key_follows_the_cells_not_their_outputs():
    nb = {"cells": [{"cell_type": "code", "source": "x = 1", "outputs": []}]}
    ran = {"cells": [{"cell_type": "code", "source": "x = 1", "outputs": [{"text": "1"}]}]}
    edited = {"cells": [{"cell_type": "code", "source": "x = 2", "outputs": []}]}
    assert submission_key(nb) == submission_key(ran) != submission_key(edited)


def test_a_hidden_instance_carries_no_seed():
    """The kernel sees a hidden instance's data: its name is its id, and nothing in its JSON
    form spells the seed it was drawn from."""
    from grader.problems.data import encode

    seeds = seeds_for(b"a course secret!", PARTS, "a notebook")
    for pid, inst in HIDDEN:
        bound = PARTS[pid].bind(seeds).instance(inst.id)
        data = encode(inst.kind, bound.build())
        text = data if isinstance(data, str) else json.dumps(data)
        text = data["graph"] if inst.kind == "liveness" else text
        assert str(bound.seed) not in text, inst.id
        if inst.kind in ("fusion", "plan", "liveness"):
            assert f'"name": "{inst.id}"' in text, inst.id


@pytest.mark.parametrize("pid,inst", REPRESENTATIVE, ids=[i.id for _, i in REPRESENTATIVE])
def test_a_family_is_too_varied_to_solve_offline(pid, inst):
    """A family with few structures could be solved in advance, all of it, with the reference
    passes; each hidden family must vary the *structure* with the seed."""
    seeds = range(1000, 1030)
    shapes = {_structure(inst.make(s)) for s in seeds}
    assert len(shapes) >= 27, f"{inst.id}: only {len(shapes)} structures in 30 seeds"


def test_a_graded_kernel_gets_the_data_and_answers_every_instance(grader_gives):
    seeds = seeds_for(b"a course secret!", PARTS, "a notebook")
    grader_gives([part.bind(seeds) for part in PARTS.values()])
    ans = submit("fusion_chains", lambda g, c: None, hidden=True, score=False)
    assert set(ans.doc["answers"]) == {i.id for i in PARTS["fusion_chains"].instances}
    shown = {pid: instances(pid, hidden=True) for pid in PARTS}  # each part's data read once
    for pid, inst in HIDDEN:
        bound = PARTS[pid].bind(seeds).instance(inst.id).build()
        assert _fingerprint(shown[pid][inst.id]) == _fingerprint(bound), inst.id


def test_the_secret_is_created_private_once_and_never_through_a_link(tmp_path):
    path = tmp_path / "gradebook" / "hidden_instances.key"
    got: list[bytes] = []
    threads = [threading.Thread(target=lambda: got.append(load_secret(path))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8  # every grader got it (none crashed on another's temporary file)
    assert len(set(got)) == 1 and len(got[0]) == 32  # eight graders at once: one secret
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        load_secret(path)
    link = tmp_path / "link.key"
    os.symlink(path, link)
    with pytest.raises(OSError):
        load_secret(link)


@pytest.mark.parametrize("stratum", range(len(families.CHAIN_STRATA)))
def test_a_chain_stratum_fixes_whether_one_kernel_pays(stratum):
    """Part 2 asks whether merging a chain pays; its hidden strata fix the answer (half yes,
    half no) whatever the seed draws, so a pass that always merges everything meets the same
    mix on every draw and its points barely move (benchmarks/grading_spread.py)."""
    pays = families.CHAIN_STRATA[stratum][2]
    for seed in (11, 12, 13):
        ratio = families.one_kernel_ratio(families.chain_variant(seed, stratum=stratum))
        assert ratio <= families.PAYS_BELOW if pays else ratio >= 1, (seed, ratio)


def test_every_submission_meets_each_row_count_of_a_skinny_kernel_equally_often():
    """A skinny kernel's few rows fit a row tile or leave a ragged last one, which decides a
    fixed tile's cycles; drawn per seed, how many ragged kernels a submission met moved a
    fixed-tile answer by 0.26 points (benchmarks/grading_spread.py). The double-buffering
    part stratifies the row count as well as the row: each step of it equally often."""
    from collections import Counter

    part, table = PARTS["instgen_double"], kernels.STREAMING_STRATA
    mixes = []
    for secret in (b"course run A", b"course run B"):
        bound = part.bind(seeds_for(secret, [part.id], "a notebook"))
        rows = [bound.instance(i.id).build().inputs[0].shape[0] for i in part.hidden()]
        mixes.append(rows)
        for k in range(len(table)):  # instance k draws row k % 4: every step of it, as often
            counts = Counter(rows[k :: len(table)])
            assert len(counts) == len(kernels.ROW_STEPS), (k, counts)
            assert len(set(counts.values())) == 1, (k, counts)
    assert mixes[0] == mixes[1]  # the same row counts, in the same places, on every draw


@pytest.mark.parametrize("stratum", range(len(families.TIGHT_STRATA)))
def test_a_tight_arena_leaves_the_baseline_room_below_it(stratum):
    """The memory challenge's tight arenas are challenges: greedy by size (the baseline, half
    credit) is at least the gap above the reference, never within the part's slack by luck,
    so the baseline earns exactly half on every draw (benchmarks/grading_spread.py)."""
    assert families.CHALLENGE_GAP >= 1 + 2 * CHALLENGE_SLACK
    for seed in (21, 22, 23):
        gap = families.baseline_gap(families.tight_variant(seed, stratum=stratum))
        assert gap >= families.CHALLENGE_GAP, (seed, gap)


@pytest.mark.parametrize(
    ("family", "stratum"),
    [("transformer_variant", k) for k in range(len(families.TRANSFORMER_STRATA))]
    + [("cnn_variant", k) for k in range(len(families.CNN_STRATA))],
)
def test_a_fusion_challenge_instance_is_one_where_fusion_pays(family, stratum):
    """Every stratum of the fusion challenge draws graphs where the reference fusion beats one
    kernel per op by at least the gap, so the credit line from naive to full credit is never
    a sliver that 1% of cycles crosses (seeds 22 and 23 drew such graphs before: a small
    transformer 9.6% faster fused, a CNN 2.8%)."""
    for seed in (21, 22, 23):
        gap = families.fusion_gap(getattr(families, family)(seed, stratum=stratum))
        assert gap >= families.CHALLENGE_GAP, (seed, gap)


def test_a_graphs_numbers_are_remembered_for_that_graph_alone():
    """The redraw test and the scoring share a graph's numbers (once_per_graph): the renamed
    instance is the same graph, but an equal graph built again, or other arguments, are not."""
    calls = []

    @families.once_per_graph(4)
    def numbers(graph, k):
        calls.append(graph.name)
        return len(graph.nodes) + k

    graph = families.chain_variant(3, stratum=0)
    renamed = graph.replace(name="chains_h1")
    assert numbers(graph, 1) == numbers(renamed, 1) == len(graph.nodes) + 1
    assert calls == [graph.name]
    numbers(families.chain_variant(3, stratum=0), 1)  # equal, but other objects
    numbers(graph, 2)
    assert len(calls) == 3 and numbers.cache_info().currsize == 3
    # a remembered partition prints with the graph it was asked for
    assert families.reference_partition(renamed).graph is renamed
    assert families.reference_partition(graph).graph is graph


@pytest.mark.parametrize(
    ("family", "stratum"),
    [("conv_variant", k) for k in range(len(kernels.CONV_STRATA))]
    + [("mlp_variant", k) for k in range(len(kernels.MLP_STRATA))],
)
def test_an_instruction_generation_challenge_leaves_room_beyond_the_baseline(family, stratum):
    """On every stratum of the instruction-generation challenge, double buffering pays: the
    single-buffered program (the baseline, half credit) is at least the gap slower than the
    reference, so it never earns full credit by the luck of a small kernel (seeds 21 and 22
    of the first two conv strata drew such kernels before they were redrawn)."""
    for seed in (21, 22, 23):
        graph = getattr(kernels, family)(seed, stratum=stratum)
        gap = kernels.double_buffer_gap(graph)
        assert gap >= families.CHALLENGE_GAP, (seed, gap)


@pytest.mark.parametrize("stratum", range(len(families.SCRATCHPAD_STRATA)))
def test_a_scratchpad_block_never_puts_the_baseline_on_the_fence(stratum):
    """On a scratchpad block greedy's cycles are within half the slack of the reference's or
    beyond twice it; never near the line where half credit turns into full."""
    for seed in (21, 22):
        gap = families.baseline_gap(families.scratchpad_variant(seed, stratum=stratum))
        assert gap <= families.REACHED or gap >= families.CHALLENGE_GAP, (seed, gap)
