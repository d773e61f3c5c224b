"""A throw-away PostgreSQL server for the grading tests: no mock, no system service.

:func:`postgres` (a pytest fixture, one server per test module) runs Debian's server binaries
(``/usr/lib/postgresql/<version>/bin``, the ``postgresql`` package that ``.ci/run`` installs)
from a fresh temporary folder: ``initdb``, then ``pg_ctl start`` on a free loopback port, as
the unprivileged ``postgres`` user when the tests run as root (the server refuses root). At
the end the server is stopped and the folder removed. Each test takes a database of its own
from :meth:`Server.new_database`. Where the binaries are absent the tests skip, saying so.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

BINARIES = sorted(
    Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: p.parent.parent.name
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One PostgreSQL server in its own folder, on a loopback port."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.folder = Path(tempfile.mkdtemp(prefix="chipsim-pg-"))
        self.data, self.port = self.folder / "data", _free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.folder, pw.pw_uid, pw.pw_gid)

    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess:
        argv = [str(self.bindir / cmd[0]), *cmd[1:]]
        if self.user:
            argv = ["runuser", "-u", self.user, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:2])} failed:\n{done.stdout}\n{done.stderr}")
        return done

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "chipsim", "-E", "UTF8",
                  "--no-sync")  # fmt: skip

    def start(self) -> None:
        opts = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.folder / "log"),
                  "-w", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://chipsim@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database on this server: its URL (as GRADEBOOK_URL takes it)."""
        import psycopg

        name = f"gb_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=chipsim dbname=postgres",
                             autocommit=True) as conn:  # fmt: skip
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    """A running throw-away server (module-wide), removed afterwards."""
    if not BINARIES:
        pytest.skip(
            "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: install Debian's "
            "`postgresql` package (`.ci/run` does) to run the PostgreSQL gradebook tests"
        )
    server = Server(BINARIES[-1].parent)
    try:
        server.init()
        server.start()
        yield server
    finally:
        server.remove()
