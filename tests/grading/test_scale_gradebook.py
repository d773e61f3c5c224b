"""The gradebook on any database: the URL's choice, the grading records on a real PostgreSQL
server (claims, the ledger, the audit log), retries while the server is away, and shards."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from scale_postgres import postgres  # noqa: F401 - the fixture

from chipsim.errors import ChipsimError
from grader.gradebook import db as gradebook_db
from grader.gradebook.jobs import Job
from grader.gradebook.records import Store
from grader.gradebook.shards import Shard, shard_of


def test_gradebook_url_wins_then_the_config_then_sqlite(tmp_path, monkeypatch):
    monkeypatch.delenv("GRADEBOOK_URL", raising=False)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert (
        gradebook_db.db_url(plain)
        == f"sqlite:///{plain / 'gradebook' / 'gradebook.db'}?timeout=120"
    )
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.db_url = 'postgresql://ta@db.example.edu/course'\n"
    )
    assert gradebook_db.db_url(configured) == "postgresql+psycopg://ta@db.example.edu/course"
    monkeypatch.setenv("GRADEBOOK_URL", "postgres://grader:pw@h:5433/chipsim")
    for course in (plain, configured):
        assert gradebook_db.db_url(course) == "postgresql+psycopg://grader:pw@h:5433/chipsim"
    assert "pw" not in gradebook_db.describe(gradebook_db.db_url(plain))
    assert gradebook_db.configured_url(tmp_path) == "postgresql+psycopg://grader:pw@h:5433/chipsim"


def test_the_course_config_reads_gradebook_url(tmp_path, monkeypatch):
    from pathlib import Path

    from traitlets.config.loader import PyFileConfigLoader

    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("GRADEBOOK_URL", "postgresql://ta@db/course")
    loaded = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    assert loaded.CourseDirectory.db_url == "postgresql+psycopg://ta@db/course"


def test_shards_split_by_learner_id_not_by_list_order():
    learners = [f"learner{k:04d}" for k in range(1000)]
    jobs = [Job(s, a) for s in learners for a in ("fusion", "memory_planning")]
    shards = [Shard(i, 4) for i in range(4)]
    parts = [s.select(jobs) for s in shards]
    assert Counter(j for p in parts for j in p) == Counter(jobs)  # each job in exactly one shard
    assert all(200 <= len(p) / 2 <= 300 for p in parts)  # a fair share (binomial sd ~14)
    reordered = [s.select(list(reversed(jobs))) for s in shards]
    assert [set(p) for p in reordered] == [set(p) for p in parts]
    owner = {j.student: i for i, p in enumerate(parts) for j in p}
    assert all(shard_of(s, 4) == owner[s] for s in learners)  # a learner's jobs stay together
    assert shard_of("learner0007", 4) == shard_of("learner0007", 4) == owner["learner0007"]


@pytest.mark.parametrize(
    ("text", "says"),
    [("4/4", "0 ... 3"), ("1-4", "INDEX/COUNT"), ("a/b", "INDEX/COUNT"), ("0/0", "INDEX/COUNT")],
)
def test_a_bad_shard_says_how_to_write_it(text, says):
    with pytest.raises(ChipsimError, match=says):
        Shard.parse(text)


def _store(server) -> Store:
    store = Store(gradebook_db.normalize(server.new_database()))
    store.create()
    return store


def test_one_claim_wins_among_many_and_a_dead_holders_claim_passes_on(postgres):  # noqa: F811
    store = _store(postgres)
    owners = [f"p{k}" for k in range(12)]
    with ThreadPoolExecutor(12) as pool:
        won = list(pool.map(lambda o: store.claim("ada/fusion", o, lease=30), owners))
    assert sum(won) == 1
    holder = owners[won.index(True)]
    other = next(o for o in owners if o != holder)
    assert store.claim("ada/fusion", holder, lease=30)  # a holder may ask again
    assert not store.claim("ada/fusion", other, lease=30)
    time.sleep(1.2)  # the holder stops beating ...
    assert store.claim("ada/fusion", other, lease=1.0)  # ... and its claim passes on
    assert not store.claim("ada/fusion", holder, lease=1.0)


def test_recording_a_grade_releases_the_claim_and_logs_it_once(postgres):  # noqa: F811
    store = _store(postgres)
    assert store.claim("ada/fusion", "p1", lease=30)
    store.record("ada/fusion", "d1", "graded", owner="p1")
    assert store.entry("ada/fusion")["status"] == "graded"
    assert store.claim("ada/fusion", "p2", lease=30)  # released by the record
    store.record("ada/fusion", "d1", "not graded", "a reason", owner="p2")
    store.record("bob/fusion", "d2", "graded", owner="p3")
    assert [(k, d) for k, d, _ in store.gradings()] == [("ada/fusion", "d1"), ("bob/fusion", "d2")]
    assert store.entries()["ada/fusion"] == {
        "digest": "d1",
        "status": "not graded",
        "reason": "a reason",
    }


def test_the_database_going_away_for_seconds_delays_writes_but_loses_none(postgres):  # noqa: F811
    store = _store(postgres)
    postgres.stop()
    restart = threading.Timer(3.0, postgres.start)
    restart.start()
    try:
        t0 = time.monotonic()
        for k in range(5):
            store.record(f"s{k}/fusion", "d", "graded", owner="p")
        assert time.monotonic() - t0 >= 2.5  # they waited for the server
    finally:
        restart.join()
    assert Counter(k for k, _, _ in store.gradings()) == {f"s{k}/fusion": 1 for k in range(5)}


def test_a_database_that_stays_away_gives_a_clear_error(postgres):  # noqa: F811
    store = _store(postgres)
    postgres.stop()
    try:
        with pytest.raises(
            ChipsimError, match="did not answer for 1 s.*nothing graded so far is lost"
        ):
            gradebook_db.wait_until_reachable(store.url, patience=1.0)
    finally:
        postgres.start()
