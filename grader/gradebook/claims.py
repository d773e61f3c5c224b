"""One grading process's side of the shared records: take a job, keep it, give it back.

:class:`Claims` wraps :class:`.records.Store` for one process (its ``owner`` identity):
:meth:`Claims.take` decides, for the next job in the queue, whether this process grades it
(``"mine"``), another live process is grading it (``"busy"``: ask again later), or it has been
graded meanwhile by another (``"done"``). A background thread renews this process's claims
every ``lease / 6`` seconds; a process that dies stops renewing, and its claims pass to the
next process that asks once they are ``lease`` seconds old (``CHIPSIM_CLAIM_LEASE``).
"""

from __future__ import annotations

import os
import threading
import time

from grader.gradebook.records import Store

#: Seconds after its holder's last heartbeat that a claim may be taken over.
LEASE = float(os.environ.get("CHIPSIM_CLAIM_LEASE", "60"))


class Claims:
    """Claims of the process ``owner`` on the jobs of one run (started at ``started``)."""

    def __init__(self, store: Store, owner: str, *, force: bool, lease: float = LEASE) -> None:
        self.store, self.owner, self.force, self.lease = store, owner, force, lease
        self.started = time.time()
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._beating, daemon=True)

    def __enter__(self) -> Claims:
        self._beat.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._beat.join()

    def _beating(self) -> None:
        while not self._stop.wait(self.lease / 6):
            try:
                self.store.heartbeat(self.owner)
            except Exception:  # the database is away for longer than its patience: try later
                continue

    def graded_meanwhile(self, key: str, digest: str) -> bool:
        """Has another process graded ``key`` from ``digest`` (since this run started, when
        every job is being regraded)?"""
        entry = self.store.entry(key)
        if entry.get("status") != "graded" or entry.get("digest") != digest:
            return False
        return not self.force or entry.get("updated", 0.0) >= self.started

    def take(self, key: str, digest: str) -> str:
        """``"mine"``, ``"busy"`` or ``"done"`` (see the module's text)."""
        if not self.store.claim(key, self.owner, self.lease):
            return "done" if self.graded_meanwhile(key, digest) else "busy"
        if self.graded_meanwhile(key, digest):
            self.store.release(key, self.owner)
            return "done"
        return "mine"
