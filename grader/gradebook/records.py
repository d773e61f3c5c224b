"""The grading records, kept in the gradebook database itself: the one source of truth.

Three tables live beside nbgrader's own, in whatever database holds the gradebook
(:mod:`~grader.gradebook.db`):

- ``chipsim_ledger``: for each job (``learner/assignment``) the digest it was last graded
  from and how that went (:mod:`~grader.gradebook.ledger` decides what to regrade from it);
- ``chipsim_claims``: which grading process is grading a job *now*, with that process's
  heartbeat. A job is graded only by the process that holds its claim;
- ``chipsim_gradings``: one row per successful grading (job, digest, process, time): the
  audit trail that shows every submission was graded exactly once.

Why the database and not file locks: every grading process, on any machine, already reaches
the database, and its transactions are atomic on every server SQLAlchemy supports; ``flock``
on a shared (NFS) course folder is not reliable across machines. A claim is taken by one
atomic statement (an ``INSERT`` on the job's primary key, or an ``UPDATE`` of a claim whose
owner's heartbeat is older than the lease), so two processes can never both hold a job — not
even two shards started with the same index by mistake. A process that is killed stops
beating; once its claims are older than the lease, whoever runs next takes them over.
Recording a grade, appending the audit row and releasing the claim are one transaction.

Heartbeats are the grading machines' clocks (``time.time()``): keep them in sync (NTP), with
a lease far longer than any clock skew (the default is 60 s).
"""

from __future__ import annotations

import socket
import time
import uuid

from grader.gradebook.db import engine, retrying


def _tables():
    from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text

    meta = MetaData()
    ledger = Table(
        "chipsim_ledger", meta,
        Column("key", String(300), primary_key=True),
        Column("digest", String(64), nullable=False),
        Column("status", String(20), nullable=False),
        Column("reason", Text, nullable=False, default=""),
        Column("owner", String(200), nullable=False, default=""),
        Column("updated", Float, nullable=False),
    )  # fmt: skip
    claims = Table(
        "chipsim_claims", meta,
        Column("key", String(300), primary_key=True),
        Column("owner", String(200), nullable=False),
        Column("heartbeat", Float, nullable=False),
    )  # fmt: skip
    gradings = Table(
        "chipsim_gradings", meta,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("key", String(300), nullable=False, index=True),
        Column("digest", String(64), nullable=False),
        Column("owner", String(200), nullable=False),
        Column("at", Float, nullable=False),
    )  # fmt: skip
    return meta, ledger, claims, gradings


META, LEDGER, CLAIMS, GRADINGS = _tables()


def new_owner(label: str = "") -> str:
    """A grading process's identity: host, pid, a random part (and e.g. the shard)."""
    tail = f" {label}" if label else ""
    return f"{socket.gethostname()}:{__import__('os').getpid()}:{uuid.uuid4().hex[:8]}{tail}"


class Store:
    """The records of the gradebook at ``url`` (create the tables with :meth:`create`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = engine(url)

    def create(self) -> None:
        """Create the tables if missing (call after nbgrader has created its own)."""
        retrying(lambda: META.create_all(self.engine), "creating the grading records")

    def entries(self) -> dict[str, dict]:
        """The whole ledger: job key -> ``{"digest", "status", "reason"}``."""

        def read() -> dict[str, dict]:
            with self.engine.connect() as conn:
                rows = conn.execute(LEDGER.select()).mappings().all()
            return {
                r["key"]: {"digest": r["digest"], "status": r["status"], "reason": r["reason"]}
                for r in rows
            }

        return retrying(read, "reading the ledger")

    def entry(self, key: str) -> dict:
        """One job's ledger row as it is now (``{}`` when it was never graded)."""

        def read() -> dict:
            with self.engine.connect() as conn:
                row = conn.execute(LEDGER.select().where(LEDGER.c.key == key)).mappings().first()
            return dict(row) if row else {}

        return retrying(read, f"reading the ledger entry of {key}")

    def claim(self, key: str, owner: str, lease: float) -> bool:
        """Take ``key`` for ``owner``: True when it is now ours (free, ours, or its holder's
        heartbeat is older than ``lease`` seconds), False while another live process has it."""
        from sqlalchemy.exc import IntegrityError

        def take() -> bool:
            now = time.time()
            try:
                with self.engine.begin() as conn:
                    conn.execute(CLAIMS.insert().values(key=key, owner=owner, heartbeat=now))
                return True
            except IntegrityError:
                pass
            with self.engine.begin() as conn:
                stale = (CLAIMS.c.owner == owner) | (CLAIMS.c.heartbeat < now - lease)
                done = conn.execute(
                    CLAIMS.update()
                    .where((CLAIMS.c.key == key) & stale)
                    .values(owner=owner, heartbeat=now)
                )
                return done.rowcount == 1

        return retrying(take, f"claiming {key}")

    def heartbeat(self, owner: str) -> None:
        """Keep ``owner``'s claims alive."""

        def beat() -> None:
            with self.engine.begin() as conn:
                conn.execute(
                    CLAIMS.update().where(CLAIMS.c.owner == owner).values(heartbeat=time.time())
                )

        retrying(beat, "renewing this process's claims")

    def release(self, key: str, owner: str) -> None:
        def drop() -> None:
            with self.engine.begin() as conn:
                conn.execute(
                    CLAIMS.delete().where((CLAIMS.c.key == key) & (CLAIMS.c.owner == owner))
                )

        retrying(drop, f"releasing {key}")

    def record(self, key: str, digest: str, status: str, reason: str = "", owner: str = "") -> None:
        """One transaction: the job's ledger row, an audit row when ``status`` is
        ``graded``, and the release of ``owner``'s claim on it."""
        from sqlalchemy.exc import IntegrityError

        def write() -> None:
            now = time.time()
            row = {"digest": digest, "status": status, "reason": reason, "owner": owner}
            with self.engine.begin() as conn:
                done = conn.execute(
                    LEDGER.update().where(LEDGER.c.key == key).values(**row, updated=now)
                )
                if done.rowcount == 0:
                    conn.execute(LEDGER.insert().values(key=key, **row, updated=now))
                if status == "graded":
                    conn.execute(
                        GRADINGS.insert().values(key=key, digest=digest, owner=owner, at=now)
                    )
                if owner:
                    conn.execute(
                        CLAIMS.delete().where((CLAIMS.c.key == key) & (CLAIMS.c.owner == owner))
                    )

        def write_once_more_on_a_race() -> None:
            try:
                write()
            except IntegrityError:  # another process inserted the row first: update it now
                write()

        retrying(write_once_more_on_a_race, f"recording the grade of {key}")

    def gradings(self) -> list[tuple[str, str, str]]:
        """Every successful grading: (job key, digest, owner), oldest first."""

        def read() -> list[tuple[str, str, str]]:
            with self.engine.connect() as conn:
                rows = conn.execute(GRADINGS.select().order_by(GRADINGS.c.id)).all()
            return [(r.key, r.digest, r.owner) for r in rows]

        return retrying(read, "reading the grading log")
