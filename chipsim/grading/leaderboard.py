"""``make leaderboard``: the class's results on the open challenges, ranked.

Full marks stop at the reference; the leaderboard shows how far beyond it learners went. For
every challenge instance it ranks each learner's best simulated result over every grading so
far (cycles; smaller is better) against the reference pass and, where there is one, the lower
bound.

It is built from the grader's own numbers only: while autograding, ``RescoreAnswers``
recomputes every answer in the grader's process and writes the measured numbers of the
challenge parts into the autograded notebook's metadata (``metadata.chipsim.measured``,
overwriting anything a learner's notebook carried there). Nothing a learner's kernel printed
or stored is read. Hidden instances are left out (their results would describe them).

    python -m chipsim.grading.leaderboard [--course .] [--pseudonyms]

writes ``gradebook/leaderboard.csv`` and ``gradebook/leaderboard.html``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chipsim.grading.problems import PARTS
from chipsim.grading.scoring import PartScore

#: The open-challenge parts (full credit at the reference; better is possible).
CHALLENGES = ("fusion_challenge", "memory_challenge")


def measured(score: PartScore) -> dict[str, dict[str, int]]:
    """What the leaderboard keeps of a challenge part's score: the grader's numbers per
    visible instance whose answer was valid."""
    part = PARTS[score.part]
    visible = {i.id for i in part.instances if not i.hidden}
    return {
        s.instance: dict(s.numbers)
        for s in score.instances
        if s.instance in visible and s.numbers and not s.invalid
    }


@dataclass(frozen=True, slots=True)
class Entry:
    part: str
    instance: str
    learner: str
    theirs: int
    reference: int
    lower_bound: int | None

    @property
    def vs_reference(self) -> float:
        """Their result relative to the reference (below 1: better than the reference)."""
        return self.theirs / self.reference if self.reference else float("inf")


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
            if part not in CHALLENGES or not isinstance(results, dict):
                continue
            for instance, n in results.items():
                try:
                    entries.append(
                        Entry(
                            part,
                            str(instance),
                            learner,
                            int(n["theirs"]),
                            int(n["reference"]),
                            int(n["lower_bound"]) if "lower_bound" in n else None,
                        )  # fmt: skip
                    )
                except (KeyError, TypeError, ValueError):
                    continue
    return entries


def best(entries: list[Entry], history: Path) -> list[Entry]:
    """Each learner's best result per instance, over this grading and the ones before it
    (kept in ``history``, written by the leaderboard itself): a worse resubmission does not
    lower a learner's place."""
    kept: dict[tuple[str, str, str], Entry] = {}
    if history.is_file() and not history.is_symlink():
        try:
            kept = {(e.part, e.instance, e.learner): e
                    for e in (Entry(**row) for row in json.loads(history.read_text()))}  # fmt: skip
        except (ValueError, TypeError):
            kept = {}
    for e in entries:
        key = (e.part, e.instance, e.learner)
        if key not in kept or e.theirs < kept[key].theirs or e.reference != kept[key].reference:
            kept[key] = e
    rows = [
        {"part": e.part, "instance": e.instance, "learner": e.learner, "theirs": e.theirs,
         "reference": e.reference, "lower_bound": e.lower_bound}
        for e in kept.values()
    ]  # fmt: skip
    history.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return list(kept.values())


def pseudonym(learner: str, salt: bytes) -> str:
    """A stable name that does not reveal the learner (salted with the course's secret)."""
    return "learner-" + hashlib.sha256(salt + learner.encode()).hexdigest()[:6]


def ranked(entries: list[Entry]) -> dict[tuple[str, str], list[Entry]]:
    """(part, instance) -> entries, best (fewest cycles) first; ties by name."""
    table: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        table.setdefault((e.part, e.instance), []).append(e)
    return {k: sorted(v, key=lambda e: (e.theirs, e.learner)) for k, v in sorted(table.items())}


def write(course: Path, pseudonyms: bool = False) -> tuple[Path, Path]:
    """Write ``gradebook/leaderboard.csv`` and ``.html``; return their paths."""
    out = course / "gradebook"
    key = out / "hidden_instances.key"
    salt = key.read_bytes() if key.is_file() else b"chipsim-ch4"
    table = ranked(best(collect(course), out / "leaderboard.json"))

    def name(e: Entry) -> str:
        return pseudonym(e.learner, salt) if pseudonyms else e.learner

    csv_path, html_path = out / "leaderboard.csv", out / "leaderboard.html"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["part", "instance", "rank", "learner", "cycles", "reference", "vs_reference",
                    "lower_bound"])  # fmt: skip
        for (part, inst), rows in table.items():
            for rank, e in enumerate(rows, 1):
                lb = "" if e.lower_bound is None else e.lower_bound
                w.writerow([part, inst, rank, name(e), e.theirs, e.reference,
                            f"{e.vs_reference:.4f}", lb])  # fmt: skip
    html_path.write_text(_html(table, name), encoding="utf-8")
    return csv_path, html_path


def _html(table: dict[tuple[str, str], list[Entry]], name: Any) -> str:
    parts = ["<!doctype html><meta charset='utf-8'><title>Leaderboard</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
             "table{border-collapse:collapse;margin-bottom:2em}td,th{padding:.2em .8em;"
             "border-bottom:1px solid #ddd;text-align:right}td:nth-child(2){text-align:left}"
             ".beat{color:#080;font-weight:bold}</style>",
             "<h1>Open challenges: the class leaderboard</h1>",
             "<p>Simulated cycles recomputed by the grader (fewer is better). Full marks stop "
             "at the reference; below 100% of it you beat the course's own pass.</p>"]  # fmt: skip
    if not table:
        parts.append("<p>No graded challenge answers yet: run <code>make grade</code>.</p>")
    for (part, inst), rows in table.items():
        lb = rows[0].lower_bound
        extra = f", lower bound {lb:,}" if lb is not None else ""
        parts.append(f"<h2>{html.escape(part)}: {html.escape(inst)}</h2>")
        parts.append(f"<p>reference {rows[0].reference:,} cycles{extra}</p>")
        parts.append("<table><tr><th>#</th><th>learner</th><th>cycles</th>"
                     "<th>vs reference</th></tr>")  # fmt: skip
        for rank, e in enumerate(rows, 1):
            cls = " class='beat'" if e.theirs < e.reference else ""
            parts.append(f"<tr{cls}><td>{rank}</td><td>{html.escape(name(e))}</td>"
                         f"<td>{e.theirs:,}</td><td>{e.vs_reference:.1%}</td></tr>")  # fmt: skip
        parts.append("</table>")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chipsim.grading.leaderboard")
    ap.add_argument("--course", default=".")
    ap.add_argument("--pseudonyms", action="store_true", help="show stable pseudonyms")
    args = ap.parse_args(argv)
    csv_path, html_path = write(Path(args.course).resolve(), args.pseudonyms)
    print(f"leaderboard: {html_path} (and {csv_path.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
