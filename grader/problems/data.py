"""Problems as data: how a hidden instance travels from the grader into a learner's kernel.

While a notebook is graded, its kernel needs the hidden instances to run the learner's
functions on them, but must learn nothing it could use beyond this one grading: no seed (with
a seed a family could be replayed, and a planted optimum read off its generator), no secret.
So the grader builds each hidden instance itself, writes its *data* here — a graph as its JSON
form, usage records as rows — and the kernel reads them back (:func:`decode`). The grader
scores the answers on instances it rebuilds from the seeds in its own process; a kernel that
changed the data only answers for another problem (the answer's fingerprint says which).

Per instance kind: ``classify`` -> ``{"ops", "pairs"}`` and ``units`` -> ``{"items"}`` as
they are; ``fusion``, ``plan`` and ``program`` -> the graph's JSON text; ``liveness`` ->
``{"graph": JSON text, "order": [node index, ...]}``; ``first_fit`` and ``arena`` ->
``[[id, size, first, last], ...]``.

Example:
    >>> from chipsim.passes.memory import UsageRecord
    >>> data = encode("arena", [UsageRecord("a", 64, 0, 2)])
    >>> data, decode("arena", data)
    ([['a', 64, 0, 2]], [UsageRecord(id='a', size=64, first=0, last=2)])
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chipsim.errors import SerializationError
from chipsim.ir.serialize import graph_from_json, graph_to_json
from grader.problems.part import HiddenInstanceError, Part

#: The variable that names the file holding a graded kernel's hidden instances.
HIDDEN_FILE_ENV = "CHIPSIM_HIDDEN_FILE"
#: Its name inside the sandbox (the kernel's home, beside the submission's files).
HIDDEN_FILE = ".chipsim-hidden.json"


def encode(kind: str, problem: Any) -> Any:
    """The JSON-ready data of one problem of ``kind``."""
    if kind == "classify":
        return {"ops": list(problem["ops"]), "pairs": [list(p) for p in problem["pairs"]]}
    if kind == "units":
        return {"items": [dict(i) for i in problem["items"]]}
    if kind in ("fusion", "plan", "program"):
        return graph_to_json(problem)
    if kind == "liveness":
        graph, order = problem
        return {"graph": graph_to_json(graph), "order": [int(i) for i in order]}
    if kind in ("first_fit", "arena"):
        return [[r.id, int(r.size), int(r.first), int(r.last)] for r in problem]
    raise KeyError(f"unknown instance kind {kind!r}")


def decode(kind: str, data: Any) -> Any:
    """The problem :func:`encode` wrote (a :class:`SerializationError` if it is not one)."""
    from chipsim.passes.memory import UsageRecord

    try:
        if kind == "classify":
            return {"ops": [str(o) for o in data["ops"]],
                    "pairs": [(str(p), str(c)) for p, c in data["pairs"]]}  # fmt: skip
        if kind == "units":
            return {"items": [{"op": str(i["op"]), "dtype": str(i["dtype"]),
                               "shapes": [[operator.index(d) for d in s] for s in i["shapes"]]}
                              for i in data["items"]]}  # fmt: skip
        if kind in ("fusion", "plan", "program"):
            return graph_from_json(data)
        if kind == "liveness":
            return graph_from_json(data["graph"]), [operator.index(i) for i in data["order"]]
        if kind in ("first_fit", "arena"):
            return [UsageRecord(str(i), *(operator.index(x) for x in rest)) for i, *rest in data]
    except (KeyError, TypeError, ValueError) as exc:
        raise SerializationError(f"a {kind} problem's data is damaged: {exc}") from None
    raise KeyError(f"unknown instance kind {kind!r}")


def payload(parts: list[Part]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{part id: {instance id: {"kind", "data"}}}`` for the hidden instances of ``parts``
    (bound to their seeds)."""
    return {
        part.id: {i.id: {"kind": i.kind, "data": encode(i.kind, i.build())} for i in part.hidden()}
        for part in parts
    }


def write(parts: list[Part], path: Path) -> Path:
    """Write the hidden instances of ``parts`` to ``path`` (readable by the kernel only)."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(payload(parts), f)
    return path


def hidden_problems(part_id: str, environ: Mapping[str, str] | None = None) -> dict[str, tuple]:
    """In a graded kernel: ``{instance id: (kind, problem)}`` of ``part_id``'s hidden
    instances, as the grader wrote them; raises when there are none (not being graded)."""
    name = (os.environ if environ is None else environ).get(HIDDEN_FILE_ENV)
    if not name or not Path(name).is_file():
        raise HiddenInstanceError(
            "the hidden instances are drawn by the grader for each submission: they exist "
            "only while your notebook is graded. Check yourself with the visible ones "
            "(hidden=False)"
        )
    with open(name, encoding="utf-8") as f:
        doc = json.load(f)
    mine = doc.get(part_id, {})
    return {
        iid: (entry["kind"], decode(entry["kind"], entry["data"])) for iid, entry in mine.items()
    }
