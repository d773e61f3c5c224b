"""Hidden instances come from a secret only the grader holds.

The installed package defines each hidden instance as a *family* (``make(seed)``) without a
seed (:mod:`.problems`). The grader holds a secret — 32 random bytes in
``gradebook/hidden_instances.key`` (mode 0600), created on first use, so every course run
(every gradebook) has its own, or a file the instructor names in
``c.HiddenInstances.secret_file`` — and derives each hidden instance's seed from it:
``HMAC-SHA256(secret, "<part>/<instance>")``, 64 bits. Without the secret, a learner can
build instances of every family but cannot tell which ones will be asked; the same secret
always gives the same instances, so grading is deterministic.

While a notebook is graded, its kernel gets the seeds of its assignment's hidden instances
in the environment variable :data:`SEEDS_ENV` (set by
:class:`~chipsim.grading.execute.GuardedExecute`); the secret itself never leaves the
grader. The grader rebuilds every instance from the same seeds in its own process to score.

Example:
    >>> a = seeds_for(b"course run A", ["fusion_chains"])
    >>> b = seeds_for(b"course run B", ["fusion_chains"])
    >>> sorted(a) == ["chains_h1", "chains_h2"] and a != b
    True
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from chipsim.grading.problems import ASSIGNMENTS, HiddenInstanceError, Part, get_part

#: The environment variable that carries a graded notebook's hidden seeds into its kernel.
SEEDS_ENV = "CHIPSIM_HIDDEN_SEEDS"
#: Where a course keeps its secret, relative to the course root (inside the private gradebook).
DEFAULT_SECRET = Path("gradebook") / "hidden_instances.key"


def seed_for(secret: bytes, part_id: str, instance_id: str) -> int:
    """The seed of one hidden instance under ``secret`` (64 bits)."""
    mac = hmac.new(secret, f"chipsim hidden instance {part_id}/{instance_id}".encode(), "sha256")
    return int.from_bytes(mac.digest()[:8], "big")


def seeds_for(secret: bytes, part_ids: Iterable[str]) -> dict[str, int]:
    """``instance id -> seed`` for every hidden instance of ``part_ids`` (ids are unique)."""
    return {
        inst.id: seed_for(secret, pid, inst.id)
        for pid in part_ids
        for inst in get_part(pid).instances
        if inst.hidden
    }


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


def seeds_from_env(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """The seeds a graded notebook's kernel was given; raises when there are none."""
    text = (os.environ if environ is None else environ).get(SEEDS_ENV)
    if not text:
        raise HiddenInstanceError(
            "the hidden instances are drawn from the grader's secret: they exist only while "
            "your notebook is graded. Check yourself with the visible ones (hidden=False)"
        )
    return {str(k): int(v) for k, v in json.loads(text).items()}


def bind_from_env(part: Part) -> Part:
    """``part`` with the hidden seeds of this kernel (see :func:`seeds_from_env`)."""
    return part.bind(seeds_from_env())


def configured(parent: Any = None) -> HiddenInstances:
    """The course's :class:`HiddenInstances` (its secret file comes from nbgrader's config)."""
    return HiddenInstances(parent=parent)


def kernel_env(parent: Any, assignment: str) -> dict[str, str]:
    """The variables a graded notebook's kernel gets: its assignment's hidden seeds."""
    return {SEEDS_ENV: json.dumps(configured(parent).seeds(ASSIGNMENTS.get(assignment, ())))}


class HiddenInstances(LoggingConfigurable):
    """The grader's secret and the seeds it gives (configured in ``nbgrader_config.py``)."""

    secret_file = Unicode(
        str(DEFAULT_SECRET),
        help="The file holding this course run's secret (created, mode 0600, if missing).",
    ).tag(config=True)

    def secret(self) -> bytes:
        return load_secret(self.secret_file)

    def seeds(self, part_ids: Iterable[str]) -> dict[str, int]:
        return seeds_for(self.secret(), part_ids)

    def bind(self, part: Part) -> Part:
        return part.bind(self.seeds([part.id]))


def fingerprint(secret: bytes) -> str:
    """A short public name for a secret (to tell course runs apart in logs), not the secret."""
    return hashlib.sha256(b"chipsim secret fingerprint" + secret).hexdigest()[:12]
