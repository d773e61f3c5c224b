"""Hidden instances come from a secret only the grader holds, drawn anew for every submission.

The installed package defines each hidden instance as a *family* (``make(seed)``) without a
seed (:mod:`~grader.problems.parts`). The grader holds a secret — 32 random bytes in
``gradebook/hidden_instances.key`` (mode 0600), created on first use, so every course run
(every gradebook) has its own, or a file the instructor names in
``c.HiddenInstances.secret_file`` — and derives each hidden instance's seed from it and from
the submission: ``HMAC-SHA256(secret, "<part>/<instance>/<submission key>")``, 64 bits, where
the submission key (:func:`submission_key`) is a digest of the notebook's cells as the learner
wrote them. So:

* without the secret, a learner can build instances of every family but not the ones they
  will be graded on;
* what one grading shows a learner (their feedback, whatever their notebook printed about its
  instances) says nothing about the instances of their next submission, which differ as soon
  as one character of the notebook does;
* the same notebook, regraded, meets the same instances: grading is deterministic.

The fusion challenge's points come from a benchmark instead, the same for every submission
(its seeds are in the package, :func:`grader.problems.part.benchmark_seed`); the graphs drawn
here for it check that a pass earns about as much on graphs no one could prepare for
(:mod:`grader.problems.parts`).

A graded kernel never receives a seed: the grader builds the instances and hands the kernel
their data (:mod:`~grader.problems.data`), and rebuilds them from the seeds in its own process to
score.

Example:
    >>> a = seeds_for(b"course run A", ["fusion_chains"], "notebook 1")
    >>> b = seeds_for(b"course run A", ["fusion_chains"], "notebook 2")
    >>> sorted(a)[:2], a == b
    (['chains_h1', 'chains_h2'], False)
    >>> a == seeds_for(b"course run A", ["fusion_chains"], "notebook 1")
    True
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from grader.problems.part import Part
from grader.problems.parts import get_part

#: Where a course keeps its secret, relative to the course root (inside the private gradebook).
DEFAULT_SECRET = Path("gradebook") / "hidden_instances.key"


def seed_for(secret: bytes, part_id: str, instance_id: str, submission: str) -> int:
    """The seed of one hidden instance for one submission under ``secret`` (64 bits)."""
    text = f"chipsim hidden instance {part_id}/{instance_id}/{submission}"
    return int.from_bytes(hmac.new(secret, text.encode(), "sha256").digest()[:8], "big")


def seeds_for(secret: bytes, part_ids: Iterable[str], submission: str) -> dict[str, int]:
    """``instance id -> seed`` for every hidden instance of ``part_ids`` drawn for the
    submission (ids are unique); a benchmark's instances have theirs in the package."""
    return {
        inst.id: seed_for(secret, pid, inst.id, submission)
        for pid in part_ids
        for inst in get_part(pid).hidden()
        if not inst.benchmark
    }


def submission_key(nb: Any) -> str:
    """A digest of a notebook's cells as the learner wrote them (type and source of each):
    the part of a submission its hidden instances are drawn from. Outputs do not count, so
    running a notebook again changes nothing; editing any cell does."""
    h = hashlib.sha256(b"chipsim submission")
    for cell in nb.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        h.update(str(cell.get("cell_type", "")).encode() + b"\0" + source.encode() + b"\0")
    return h.hexdigest()[:32]


def load_secret(path: str | Path) -> bytes:
    """The secret in ``path``, created (32 random bytes, mode 0600) if it does not exist.

    Creation is atomic (several grading processes may start at once) and never follows a
    link; a secret others could read is refused.
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(parents=True, exist_ok=True)
        # one temporary name per process *and thread*: graders may share a process
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        try:
            os.link(tmp, path)  # fails if another process made it first: then read theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            raise PermissionError(
                f"{path} holds the hidden instances' secret but others may read it: chmod 600"
            )
        secret = f.read()
    if len(secret) < 16:
        raise ValueError(f"{path} is too short to be a secret (at least 16 bytes)")
    return secret


def configured(parent: Any = None) -> HiddenInstances:
    """The course's :class:`HiddenInstances` (its secret file comes from nbgrader's config)."""
    return HiddenInstances(parent=parent)


class HiddenInstances(LoggingConfigurable):
    """The grader's secret and the seeds it gives (configured in ``nbgrader_config.py``)."""

    secret_file = Unicode(
        str(DEFAULT_SECRET),
        help="The file holding this course run's secret (created, mode 0600, if missing).",
    ).tag(config=True)

    def secret(self) -> bytes:
        return load_secret(self.secret_file)

    def seeds(self, part_ids: Iterable[str], submission: str) -> dict[str, int]:
        return seeds_for(self.secret(), part_ids, submission)

    def bind(self, part: Part, submission: str) -> Part:
        """``part`` with the hidden instances drawn for ``submission``."""
        return part.bind(self.seeds([part.id], submission))


def fingerprint(secret: bytes) -> str:
    """A short public name for a secret (to tell course runs apart in logs), not the secret."""
    return hashlib.sha256(b"chipsim secret fingerprint" + secret).hexdigest()[:12]
