"""Which database holds the gradebook, and how the grader talks to it when it is shared.

The gradebook is any database SQLAlchemy reaches. By default it is the sqlite file
``gradebook/gradebook.db`` (one machine, no server: the right embedded default). A class
that outgrows one machine points every grader at one server instead::

    export GRADEBOOK_URL=postgresql://grader:secret@db.example.edu/chipsim

:func:`db_url` is the one place the URL is decided: ``GRADEBOOK_URL`` when it is set, else
the ``c.CourseDirectory.db_url`` of the course's ``nbgrader_config.py`` (which itself reads
``GRADEBOOK_URL``: nbgrader and the grader always agree), else the sqlite default.
``postgresql://`` URLs are given the ``psycopg`` (version 3) driver, the one the course
installs.

A shared database can go away for a moment (a restart, a fail-over): :func:`retrying` runs a
database step again, with growing pauses, for up to :data:`PATIENCE` seconds before giving up,
and :func:`exclusive` lets one grading process at a time do the first-time set-up (creating
tables, entering assignments and students) that would otherwise race.

Example:
    >>> normalize("postgres://u@h/db")
    'postgresql+psycopg://u@h/db'
    >>> describe("postgresql+psycopg://grader:secret@db/chipsim")
    'postgresql+psycopg://grader:***@db/chipsim'
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import zlib
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from chipsim.errors import ChipsimError

T = TypeVar("T")

#: Seconds a database step is retried while the server is unreachable (``CHIPSIM_DB_PATIENCE``).
PATIENCE = float(os.environ.get("CHIPSIM_DB_PATIENCE", "120"))


def default_url(gradebook: Path) -> str:
    """The single-machine default: sqlite in ``gradebook/``, waiting up to 120 s for its lock."""
    return f"sqlite:///{Path(gradebook) / 'gradebook.db'}?timeout=120"


def normalize(url: str) -> str:
    """``postgres://`` and ``postgresql://`` use the psycopg 3 driver the course installs."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def configured_url(gradebook: Path) -> str:
    """For ``nbgrader_config.py``: ``GRADEBOOK_URL`` when set, else the sqlite default."""
    url = os.environ.get("GRADEBOOK_URL", "").strip()
    return normalize(url) if url else default_url(gradebook)


def db_url(course: Path) -> str:
    """The gradebook of the course at ``course`` (see the module's text for the order)."""
    url = os.environ.get("GRADEBOOK_URL", "").strip()
    if url:
        return normalize(url)
    return _config_url(str(Path(course).resolve()))


@lru_cache(maxsize=8)
def _config_url(course: str) -> str:
    config = Path(course) / "nbgrader_config.py"
    if config.is_file():
        from traitlets.config.loader import PyFileConfigLoader

        loaded = PyFileConfigLoader(config.name, path=course).load_config()
        url = loaded.get("CourseDirectory", {}).get("db_url")
        if isinstance(url, str) and url:
            return normalize(url)
    return default_url(Path(course) / "gradebook")


def describe(url: str) -> str:
    """The URL with its password hidden, for messages."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


@lru_cache(maxsize=8)
def engine(url: str):
    """One engine per URL for the grading process (connections checked before use)."""
    from sqlalchemy import create_engine

    return create_engine(url, pool_pre_ping=True, future=True)


def _transient(exc: BaseException) -> bool:
    """Is ``exc`` the database being unreachable (worth retrying), not a mistake of ours?"""
    from sqlalchemy.exc import DBAPIError, OperationalError

    if isinstance(exc, OperationalError):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


def retrying(step: Callable[[], T], what: str, patience: float | None = None) -> T:
    """Run ``step()``; while the database is unreachable, wait and run it again.

    Pauses grow 0.2 s, 0.4 s, ... up to 5 s; after ``patience`` seconds (default
    :data:`PATIENCE`) the error is raised as a :class:`ChipsimError` naming ``what`` failed.
    """
    patience = PATIENCE if patience is None else patience
    start, pause = time.monotonic(), 0.2
    while True:
        try:
            return step()
        except Exception as exc:
            if not _transient(exc):
                raise
            if time.monotonic() - start > patience:
                raise ChipsimError(
                    f"the gradebook database did not answer for {patience:.0f} s while {what}: "
                    f"{str(exc).splitlines()[0]}. Check that the server is up and that "
                    "GRADEBOOK_URL is right, then run the same command again: nothing graded "
                    "so far is lost."
                ) from exc
            time.sleep(pause)
            pause = min(5.0, pause * 2)


def wait_until_reachable(url: str, patience: float | None = None) -> None:
    """Return once the database answers (raises after ``patience`` seconds)."""
    from sqlalchemy import text

    def ping() -> None:
        with engine(url).connect() as conn:
            conn.execute(text("SELECT 1"))

    retrying(ping, "waiting for it to come back", patience)


@contextlib.contextmanager
def exclusive(url: str, name: str, course: Path) -> Iterator[None]:
    """Only one grading process at a time (on any machine) runs the body.

    PostgreSQL: a session-level advisory lock on the server. sqlite (one machine by
    construction): an ``flock`` on ``gradebook/.<name>.lock``. Other servers: no lock; the
    first-time set-up is then best run once by a single process before starting shards.
    """
    if url.startswith("postgresql"):
        from sqlalchemy import text

        key = zlib.crc32(name.encode())
        conn = retrying(lambda: engine(url).connect(), f"locking {name!r}")
        try:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
            conn.commit()
            yield
        finally:
            with contextlib.suppress(Exception):
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                conn.commit()
            conn.close()
    elif is_sqlite(url):
        path = Path(course) / "gradebook" / f".{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
    else:
        yield
