"""The answer: what a test cell hands to the grader, as plain JSON data.

A test cell runs the learner's function on each instance of a part and serialises what came
back. Nothing else leaves the kernel: the grader rebuilds the instances itself and scores
the answer in its own process (see :mod:`grader.course.rescore`).

The answer travels as a notebook output with the MIME type :data:`MIME`::

    {"format": "chipsim.answer", "version": 1, "part": "fusion_chains",
     "answers": {"chains_a": {"graph": "<sha256>", "groups": [[0, 1], [3]]},
                 "chains_h1": {"error": "NotImplementedError: fuse_chains"}}}

Per instance kind: ``classify`` -> ``{"patterns": {op: name}, "may_fuse": [[p, c, bool]]}``;
``fusion`` -> ``{"graph", "groups"}``; ``liveness`` -> ``{"graph", "records": [[id, size,
first, last]]}``; ``first_fit``/``arena``/``plan`` -> ``{"records": "<sha256>", "offsets":
{id: int}}``. An optional ``"language"`` (``"zh_CN"``) asks for the feedback in that language.

Example:
    >>> a = encode("fusion_chains", {"chains_a": {"error": "no"}})
    >>> decode(a)["part"]
    'fusion_chains'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from chipsim.errors import SerializationError
from chipsim.ir import Graph
from chipsim.ir.serialize import graph_to_json

#: The MIME type of an answer output in a notebook.
MIME = "application/vnd.chipsim.answer+json"
FORMAT = "chipsim.answer"
#: Answers larger than this (characters of JSON) are refused as malformed. One answer holds a
#: program for every instance of its part: the instruction-generation challenge's 66 programs
#: take about 1.6 MB from the model solution and 2.4 or 4.8 MB from a valid loop nest of
#: 16 x 32 or 16 x 16 output tiles (double buffering's 41: 2.7 MB of 16 x 16 tiles;
#: tests/grading/test_grading_instgen.py), so the cap leaves such an answer room three times
#: over and still refuses a runaway one.
MAX_ANSWER_CHARS = 16_000_000


def graph_fingerprint(graph: Graph) -> str:
    """sha256 of the graph's JSON form: the same graph gives the same text everywhere."""
    return hashlib.sha256(graph_to_json(graph).encode()).hexdigest()


def records_fingerprint(records: Iterable[Any]) -> str:
    """sha256 of ``[[id, size, first, last], ...]`` in the given order."""
    rows = [[r.id, r.size, r.first, r.last] for r in records]
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def encode(part: str, answers: Mapping[str, Any], language: str | None = None) -> dict[str, Any]:
    """The answer document for ``part``; ``answers`` maps instance id -> its answer data.

    ``language``: the learner's language (``chipsim.i18n``), in which the grader writes the
    feedback; omitted, the grader uses its own.
    """
    doc = {"format": FORMAT, "version": 1, "part": part, "answers": dict(answers)}
    if language is not None:
        doc["language"] = language
    return doc


def decode(doc: Any) -> dict[str, Any]:
    """Check the envelope of an answer document (from JSON text or already parsed).

    Raises:
        SerializationError: not an answer document; the message says what is missing.
    """
    if isinstance(doc, (str, bytes)):
        if len(doc) > MAX_ANSWER_CHARS:
            raise SerializationError(f"the answer is larger than {MAX_ANSWER_CHARS} characters")
        try:
            doc = json.loads(doc)
        except ValueError as exc:
            raise SerializationError(f"the answer is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != 1:
        raise SerializationError(f'an answer is a JSON object with "format": "{FORMAT}", version 1')
    if not isinstance(doc.get("part"), str) or not isinstance(doc.get("answers"), dict):
        raise SerializationError('an answer needs "part" (a string) and "answers" (an object)')
    return doc
