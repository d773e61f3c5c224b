"""Score an answer document for one part: every required instance, from pristine data.

Used in two places with the same code: the grader's rescoring preprocessor (the score that
counts) and :func:`~grader.notebook.submit` in the kernel (a provisional score for
self-checking only).

Example:
    >>> from grader.problems.parts import get_part
    >>> from grader.scoring.answer import encode
    >>> s = score_answer(get_part("fusion_chains"), encode("fusion_chains", {}), points=3)
    >>> s.score, len(s.instances)
    (0.0, 8)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from chipsim.i18n import ENGLISH, spoken, tr, use_language
from grader.problems.part import Part
from grader.problems.parts import OVERLAP_PARTS, strategy_title
from grader.scoring.answer import decode
from grader.scoring.checks import score_instance
from grader.scoring.partscore import PartScore, feedback_language, zero


def answer_language(doc: Any) -> str:
    """The learner's language, as their kernel recorded it in the answer (``"language"``);
    else the grader's own (``CHIPSIM_LANG``, else English)."""
    return spoken(doc.get("language") if isinstance(doc, dict) else None) or feedback_language()


def remembered_language(nb: Any) -> str:
    """The language :class:`~grader.course.sanitize.RememberLanguage` kept for the notebook
    ``nb`` (English when none): the feedback's and the grader's notes in it."""
    return spoken(nb.get("metadata", {}).get("chipsim", {}).get("language")) or ENGLISH


def score_answer(
    part: Part,
    doc: Any,
    *,
    points: float,
    required: Sequence[str] | None = None,
    counted: Sequence[str] | None = None,
) -> PartScore:
    """Score ``doc`` (an answer document) for ``part``, worth ``points``.

    Args:
        part: the pristine part definition (the grader's: hidden instances bound).
        doc: the answer document (parsed JSON or text); only its data is used.
        points: the test cell's points.
        required: the instance ids scored (default: all of the part's, hidden included).
            A required instance without an answer scores 0.
        counted: those of ``required`` the points come from (default: all of them); the
            others are scored as a preview (the grader counts the hidden instances and shows
            the visible ones). Those of them that check a benchmark
            (:meth:`~grader.problems.part.Part.checks`) count only if the pass fails the
            check (:attr:`~grader.scoring.partscore.PartScore.failed_check`).

    The messages are written in the language the learner's kernel recorded in ``doc``
    (:func:`answer_language`); the points do not depend on it.
    """
    ids = tuple(required) if required is not None else tuple(i.id for i in part.instances)
    count = tuple(counted) if counted is not None else None
    checked = tuple(i.id for i in part.checks() if i.id in (ids if count is None else count))
    try:
        doc = decode(doc)
    except Exception as exc:  # any malformed document is simply a wrong answer
        with use_language(answer_language(None)):
            why = tr("malformed answer: {error}", error=exc)
            return replace(zero(part.id, points, why, ids), counted=count, checked=checked)
    with use_language(answer_language(doc)) as language:
        if doc["part"] != part.id:
            why = tr("the answer is for part {part!r}", part=doc["part"])
            return replace(zero(part.id, points, why, ids), counted=count, checked=checked)
        answers = doc["answers"]
        scores = tuple(score_instance(part, part.instance(i), answers.get(i)) for i in ids)
        return PartScore(part.id, float(points), scores, language=language, counted=count,
                         checked=checked, slack=part.slack, baseline=strategy_title(part.baseline),
                         overlap=part.id in OVERLAP_PARTS,
                         families=part.families())  # fmt: skip
