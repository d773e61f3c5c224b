"""What the leaderboard ranks: each learner's results on the open challenges, from the
grader's own numbers.

While autograding, ``RescoreAnswers`` (:mod:`grader.course.rescore`) keeps what
:func:`measured` takes of each challenge part's score in the autograded notebook's metadata
(``metadata.chipsim.measured``); :func:`collect` reads it back as one :class:`Entry` per
learner and part (the geometric mean of their result over the reference's on the instances
the grade counted, each kind of instance weighing the same; a grading with an invalid answer
on a counted instance, whose part scored 0, is not ranked), :func:`best` keeps each learner's
best over every grading so far, and :func:`ranked` orders them. The page and the CSV are
:mod:`grader.feedback.leaderboard`'s.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from grader.problems.parts import PARTS
from grader.scoring.credit import grouped
from grader.scoring.partscore import PartScore

#: The open-challenge parts (full credit near the reference; better is possible).
CHALLENGES = tuple(p for p, part in PARTS.items() if part.challenge)
#: The unit of each instance kind's number.
UNITS = {"fusion": "cycles", "plan": "cycles", "arena": "bytes", "program": "cycles"}


def measured(score: PartScore) -> dict[str, dict[str, Any]]:
    """What the leaderboard keeps of a challenge part's score: the grader's numbers per
    instance whose answer was valid, and whether the grade counted it (``counted``); a counted
    instance whose answer was invalid only as such (``invalid``: the part scored 0)."""
    part = PARTS[score.part]
    counted = {s.instance for s in score.counted_scores()}
    kinds = {i.id: i.kind for i in part.instances}
    kept: dict[str, dict[str, Any]] = {}
    for s in score.instances:
        if s.invalid and s.instance in counted:
            kept[s.instance] = {"counted": True, "invalid": True}
        elif s.numbers and not s.invalid:
            kept[s.instance] = {**s.numbers, "counted": s.instance in counted,
                                "unit": UNITS.get(kinds.get(s.instance, ""), "")}  # fmt: skip
    return kept


@dataclass
class Entry:
    """One learner's results on one challenge part, from one grading."""

    part: str
    learner: str
    ratio: float  # geometric mean of theirs / reference over the counted instances, by kind
    visible: dict[str, dict[str, Any]] = field(default_factory=dict)
    landmarks: dict[str, float] = field(default_factory=dict)  # e.g. naive / reference
    #: on a part graded on a benchmark: the same geometric mean on the graphs drawn to check
    #: it for this submission (None on other parts)
    check: float | None = None
    #: the check failed: the grade, and so :attr:`ratio`, counted the drawn graphs instead
    failed_check: bool = False


def geomean(values: list[float]) -> float:
    """The geometric mean of ``values`` (inf when there are none)."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.inf


def _by_kind(part: str, ratios: dict[str, float]) -> float:
    """The geometric mean of ``ratios`` (instance -> ratio), each kind of instance weighing
    the same, as in the grade (:meth:`~grader.problems.part.Part.families`): the memory
    challenge's many tight arenas and few scratchpad blocks count for half each.

    Example:
        >>> ratios = {f"tight_h{k}": 0.5 for k in range(1, 9)} | {"sram_transformer_h1": 2.0}
        >>> _by_kind("memory_challenge", ratios)
        1.0
    """
    families = PARTS[part].families() if part in PARTS else {}
    return geomean([geomean(v) for v in grouped(ratios.items(), families).values()])


def entry(part: str, learner: str, results: dict) -> Entry | None:
    """The leaderboard entry of ``results`` (a notebook's ``measured[part]``), or None: no
    counted instance measured, or an invalid answer on one (the part scored 0, so it is not
    ranked as if the valid answers were all)."""
    if any(isinstance(n, dict) and n.get("invalid") and n.get("counted") for n in results.values()):
        return None
    counted: dict[str, float] = {}
    visible: dict[str, dict[str, Any]] = {}
    marks: dict[str, dict[str, float]] = {"naive": {}, "baseline": {}, "lower_bound": {}}
    shared = {i.id for i in PARTS[part].visible()} if part in PARTS else set()
    check_ids = {i.id for i in PARTS[part].checks()} if part in PARTS else set()
    # the landmarks: on a benchmark, the same graphs for everybody whatever the grade counted
    bench_ids = {i.id for i in PARTS[part].graded()} if check_ids else set()
    checked: dict[str, float] = {}
    for instance, n in results.items():
        try:
            theirs, ref = int(n["theirs"]), int(n["reference"])
        except (KeyError, TypeError, ValueError):
            continue
        if ref <= 0 or theirs <= 0:
            continue
        if instance in check_ids:
            checked[str(instance)] = theirs / ref
        if (instance in bench_ids) if check_ids else n.get("counted"):
            for key in marks:
                if isinstance(n.get(key), int) and n[key] > 0:
                    marks[key][str(instance)] = n[key] / ref
        if n.get("counted"):
            counted[str(instance)] = theirs / ref
        elif instance in shared:  # not the graphs drawn for this learner (a benchmark's check)
            visible[str(instance)] = {k: n[k] for k in n if k != "counted"}
    if not counted:
        return None
    landmarks = {k: _by_kind(part, v) for k, v in marks.items() if v}
    check = _by_kind(part, checked) if checked else None
    failed = bool(counted.keys() & check_ids)
    return Entry(part, learner, _by_kind(part, counted), visible, landmarks, check, failed)


def collect(course: Path) -> list[Entry]:
    """Every learner's measured challenge results from ``gradebook/autograded``."""
    entries = []
    for path in sorted((course / "gradebook" / "autograded").glob("*/*/*.ipynb")):
        if path.is_symlink():
            continue
        learner = path.parent.parent.name
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
        except (OSError, ValueError):
            continue
        for part, results in (meta.get("chipsim", {}).get("measured") or {}).items():
            if part in CHALLENGES and isinstance(results, dict):
                found = entry(part, learner, results)
                if found is not None:
                    entries.append(found)
    return entries


def best(entries: list[Entry], history: Path) -> list[Entry]:
    """Each learner's best entry per part, over this grading and the ones before it (kept in
    ``history``, written by the leaderboard itself): a worse resubmission does not lower a
    learner's place."""
    kept: dict[tuple[str, str], Entry] = {}
    if history.is_file() and not history.is_symlink():
        try:
            kept = {(e.part, e.learner): e
                    for e in (Entry(**row) for row in json.loads(history.read_text()))}  # fmt: skip
        except (ValueError, TypeError):
            kept = {}
    for e in entries:
        key = (e.part, e.learner)
        if key not in kept or e.ratio < kept[key].ratio:
            kept[key] = e
    history.write_text(json.dumps([asdict(e) for e in kept.values()], indent=1), "utf-8")
    return list(kept.values())


def ranked(entries: list[Entry]) -> dict[str, list[Entry]]:
    """part -> entries, best (smallest ratio to the reference) first; ties by name."""
    table: dict[str, list[Entry]] = {}
    for e in entries:
        table.setdefault(e.part, []).append(e)
    return {k: sorted(v, key=lambda e: (e.ratio, e.learner)) for k, v in sorted(table.items())}
