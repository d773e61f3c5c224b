"""Grading spread over machines: shard ``i/N`` grades a fixed share of the learners.

A learner belongs to shard ``int(sha256(learner id)) mod N``: a stable hash of the id alone,
never of where the learner stands in a list, so every machine computes the same split from
the same submissions folder, adding a learner moves no one else, and all of a learner's
assignments are graded by the same shard. Shards count from 0, like the completion index of
a Kubernetes Indexed Job (``--shard $JOB_COMPLETION_INDEX/N``): ``0/4`` ... ``3/4``.

The split only shares the work out. What makes each job graded exactly once, even when a
shard dies or two are started with the same index, are the claims in the database
(:mod:`~grader.gradebook.records`).

Example:
    >>> Shard.parse("1/4")
    Shard(index=1, count=4)
    >>> [shard_of(name, 4) for name in ("ada", "alan", "grace")]
    [2, 1, 3]
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from chipsim.errors import ChipsimError
from grader.gradebook.jobs import Job


def shard_of(learner: str, count: int) -> int:
    """The shard (0 .. count-1) that grades ``learner``."""
    digest = hashlib.sha256(learner.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` of ``count``."""

    index: int
    count: int

    @staticmethod
    def parse(text: str) -> Shard:
        """``"i/N"`` -> Shard(i, N), with a clear error for anything else."""
        head, sep, tail = str(text).strip().partition("/")
        try:
            index, count = int(head), int(tail)
        except ValueError:
            index = count = -1
        if not sep or count < 1:
            raise ChipsimError(
                f"--shard {text!r}: write it as INDEX/COUNT, e.g. --shard 0/4 for the first of "
                "four shards (SHARD=0/4 with make)"
            )
        if not 0 <= index < count:
            raise ChipsimError(
                f"--shard {text}: shards count from 0, so the index must be 0 ... {count - 1} "
                f"(0/{count} ... {count - 1}/{count})"
            )
        return Shard(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def select(self, jobs: Sequence[Job]) -> list[Job]:
        """The jobs of this shard, in their given order."""
        return [j for j in jobs if shard_of(j.student, self.count) == self.index]
