"""Hidden instances come from a secret only the grader holds (chipsim.grading.hidden)."""

from __future__ import annotations

import json
import os
import threading

import pytest

from chipsim.grading import instances, submit
from chipsim.grading.answer import graph_fingerprint, records_fingerprint
from chipsim.grading.hidden import SEEDS_ENV, load_secret, seeds_for
from chipsim.grading.problems import PARTS, HiddenInstanceError

HIDDEN = [(pid, inst) for pid, part in PARTS.items() for inst in part.instances if inst.hidden]


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
    """What an answer depends on: ops and shapes (not the weights' values)."""
    if isinstance(obj, tuple):
        obj = obj[0]
    if hasattr(obj, "nodes"):
        return str([(n.op, tuple(n.output.type.shape), sorted(n.attrs)) for n in obj.nodes])
    return _fingerprint(obj)


def test_the_package_alone_cannot_build_a_hidden_instance(monkeypatch):
    monkeypatch.delenv(SEEDS_ENV, raising=False)
    assert HIDDEN and all(inst.seed is None for _, inst in HIDDEN)
    for _, inst in HIDDEN:
        with pytest.raises(HiddenInstanceError, match="grader's secret"):
            inst.build()
    with pytest.raises(HiddenInstanceError, match="only while your notebook is graded"):
        instances("fusion_challenge", hidden=True)
    with pytest.raises(HiddenInstanceError):
        submit("fusion_chains", lambda g, c: None, hidden=True, score=False)


def test_two_course_runs_differ_and_one_run_is_deterministic():
    a, b = seeds_for(b"course run A" * 3, PARTS), seeds_for(b"course run B" * 3, PARTS)
    assert a == seeds_for(b"course run A" * 3, PARTS)
    for pid, inst in HIDDEN:
        one = _fingerprint(PARTS[pid].bind(a).instance(inst.id).build())
        again = _fingerprint(PARTS[pid].bind(a).instance(inst.id).build())
        other = _fingerprint(PARTS[pid].bind(b).instance(inst.id).build())
        assert one == again and one != other, inst.id


@pytest.mark.parametrize("pid,inst", HIDDEN, ids=[i.id for _, i in HIDDEN])
def test_a_family_is_too_varied_to_solve_offline(pid, inst):
    """A family with few structures could be solved in advance, all of it, with the reference
    passes; each hidden family must vary the *structure* with the seed."""
    seeds = range(1000, 1030)
    shapes = {_structure(inst.make(s)) for s in seeds}
    assert len(shapes) >= 27, f"{inst.id}: only {len(shapes)} structures in 30 seeds"


def test_a_graded_kernel_gets_the_seeds_and_answers_every_instance(monkeypatch):
    seeds = seeds_for(b"a course secret!", PARTS)
    monkeypatch.setenv(SEEDS_ENV, json.dumps(seeds))
    ans = submit("fusion_chains", lambda g, c: None, hidden=True, score=False)
    assert set(ans.doc["answers"]) == {i.id for i in PARTS["fusion_chains"].instances}
    shown = instances("fusion_chains", hidden=True)["chains_h1"]
    bound = PARTS["fusion_chains"].bind(seeds).instance("chains_h1").build()
    assert graph_fingerprint(shown) == graph_fingerprint(bound)


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
