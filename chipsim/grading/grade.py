"""Score an answer document for one part: every required instance, from pristine data.

Used in two places with the same code: the grader's rescoring preprocessor (the score that
counts) and :func:`~chipsim.grading.submit.submit` in the kernel (a provisional score for
self-checking only).

Example:
    >>> from chipsim.grading.problems import get_part
    >>> from chipsim.grading.answer import encode
    >>> s = score_answer(get_part("fusion_chains"), encode("fusion_chains", {}), points=3)
    >>> s.score, len(s.instances)
    (0.0, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chipsim.grading.answer import decode
from chipsim.grading.checks import score_instance
from chipsim.grading.problems import Part
from chipsim.grading.scoring import PartScore, zero


def score_answer(
    part: Part, doc: Any, *, points: float, required: Sequence[str] | None = None
) -> PartScore:
    """Score ``doc`` (an answer document) for ``part``, worth ``points``.

    Args:
        part: the pristine part definition.
        doc: the answer document (parsed JSON or text); only its data is used.
        points: the test cell's points.
        required: the instance ids that count (default: all of the part's, hidden included).
            A required instance without an answer scores 0.
    """
    ids = tuple(required) if required is not None else tuple(i.id for i in part.instances)
    try:
        doc = decode(doc)
    except Exception as exc:  # any malformed document is simply a wrong answer
        return zero(part.id, points, f"malformed answer: {exc}", ids)
    if doc["part"] != part.id:
        return zero(part.id, points, f"the answer is for part {doc['part']!r}", ids)
    answers = doc["answers"]
    scores = tuple(score_instance(part, part.instance(i), answers.get(i)) for i in ids)
    return PartScore(part.id, float(points), scores)
