"""A fuzzer against the grader: a learner's odd data costs only the parts it touches.

The answer document and the notebook's metadata are the learner's data. Whatever they hold
(any JSON, in any place), scoring never raises — an odd answer is an invalid answer, with a
message naming the cause — and the sanitizing steps that run before nbgrader never raise on
the notebook either (a duplicated test cell, metadata of the wrong type, ...).
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from grading_course import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chipsim.errors import ChipsimError
from grader import PARTS, score_answer, submit
from grader.course.sanitize import RememberLanguage, restore
from grader.gradebook.jobs import check_student_id

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _answers():
    """One real answer document per part (visible instances), to mutate."""
    from chipsim.passes.fusion import Partition

    def none(graph, chip):
        return Partition([[i] for i, n in enumerate(graph.nodes) if n.op != "constant"])

    docs = {
        "fusion_patterns": submit(
            "fusion_patterns", lambda op: "elementwise", lambda p, c: True, score=False
        ).doc,  # fmt: skip
        "fusion_chains": submit("fusion_chains", none, score=False).doc,
        "memory_liveness": submit("memory_liveness", lambda g, s: [], score=False).doc,
    }
    return docs


DOCS = _answers()


def _mutate(doc: dict, path: list, value):
    """``doc`` with the place ``path`` leads to (keys/indices, cut at the first that is
    missing) replaced by ``value``."""
    doc = copy.deepcopy(doc)
    node = doc
    for step in path[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
        else:
            break
    if isinstance(node, dict) and node:
        node[sorted(node)[path[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node)] = value
    return doc


@settings(max_examples=160, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    part=st.sampled_from(sorted(DOCS)),
    path=st.lists(st.integers(0, 50), min_size=1, max_size=6),
    value=JSON,
)
def test_no_answer_data_makes_the_grader_raise(part, path, value):
    doc = _mutate(DOCS[part], path, value)
    visible = [i.id for i in PARTS[part].visible()]
    score = score_answer(PARTS[part], doc, points=PARTS[part].points, required=visible)
    assert 0.0 <= score.score <= PARTS[part].points
    assert all(isinstance(s.message, str) and s.message for s in score.instances)


def test_the_escape_the_fuzzer_found_is_an_invalid_answer_naming_the_field():
    doc = copy.deepcopy(DOCS["fusion_patterns"])
    doc["answers"]["items_a"]["patterns"] = True
    score = score_answer(PARTS["fusion_patterns"], doc, points=2, required=["items_a"])
    assert score.score == 0.0
    assert '"patterns" must be dict, not bool' in score.instances[0].message


@settings(max_examples=60, deadline=None)
@given(cell=st.integers(0, 60), meta=JSON, dup=st.booleans())
def test_no_notebook_metadata_makes_the_sanitizers_raise(cell, meta, dup):
    source = nbformat.read(ROOT / "solutions" / "fusion" / "fusion.ipynb", 4)
    nb = nbformat.read(ROOT / "exercises" / "fusion" / "fusion.ipynb", 4)
    k = cell % len(nb.cells)
    if dup:  # a duplicated test cell: same grade id, same cell id
        nb.cells.insert(k, copy.deepcopy(nb.cells[k]))
    nb.cells[k].metadata["nbgrader"] = meta
    restore(nb, source)
    RememberLanguage().preprocess(nb, {})
    for c in nb.cells:  # what nbgrader's CheckCellMetadata then reads: sound or absent
        m = c.metadata.get("nbgrader")
        assert m is None or (isinstance(m, dict) and m.get("schema_version", 3) >= 3), m


@pytest.mark.parametrize("bad", ["*", "ada\nben", "[ab]", "ada ben", "", ".hidden", "a/b"])
def test_a_learner_id_nbgrader_would_read_as_a_pattern_is_refused(bad):
    with pytest.raises(ChipsimError, match="learner id"):
        check_student_id(bad)
    assert check_student_id("аda") == "аda"  # other scripts are fine (the leaderboard warns)
