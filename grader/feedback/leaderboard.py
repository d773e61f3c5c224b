"""``make leaderboard``: the class's results on the open challenges, ranked.

Full marks stop near the reference; the leaderboard shows how far beyond it learners went.
Each learner is ranked on the instances their grade was computed on — the hidden ones drawn
for their submission, or a benchmark's graphs, the same for everybody (the fusion challenge)
— by the geometric mean of their result over the reference's (cycles or arena bytes: below
1.000 is better than the course's own pass), each kind of instance weighing the same, as in
the grade. Every learner's hidden instances differ, but the ratio to the reference measures
the same thing on each. Beside a benchmark's ratio stands the same ratio on the graphs drawn
to check it for each learner's submission
(:attr:`~grader.feedback.standings.Entry.check`), which nobody could prepare
for: a pass tuned to the benchmark alone shows there (when the check failed, the grade
counted the drawn graphs, and so does the rank: the row is marked). The
visible instances, the same for everybody, are shown beside it in their own unit, and so are
the course's own landmarks (the reference, the naive baseline and, where the part has one,
the simple baseline and the lower bound), so a learner alone in the class still sees where
they stand.

It is built from the grader's own numbers only: while autograding, ``RescoreAnswers``
recomputes every answer in the grader's process and writes the measured numbers of the
challenge parts into the autograded notebook's metadata (``metadata.chipsim.measured``,
overwriting anything a learner's notebook carried there). Nothing a learner's kernel printed
or stored is read. A learner's best over every grading so far counts; a grading with an
invalid answer on a counted instance (its part scored 0) is not ranked. What is ranked, and
how it is read from the graded notebooks: :mod:`grader.feedback.standings`; this module writes
the page and the CSV.

The CSV is safe to open in a spreadsheet (no cell starts a formula) and ids that look alike
(``ada`` and ``аda``, with a Cyrillic а) are listed as a warning.

    python -m grader.feedback.leaderboard [--course .] [--pseudonyms]

writes ``gradebook/leaderboard.csv`` and ``gradebook/leaderboard.html``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import math
import sys
import unicodedata
from pathlib import Path
from typing import Any

from grader.feedback.standings import Entry, best, collect, geomean, ranked
from grader.problems.parts import PARTS


def pseudonym(learner: str, salt: bytes) -> str:
    """A stable name that does not reveal the learner (salted with the course's secret)."""
    return "learner-" + hashlib.sha256(salt + learner.encode()).hexdigest()[:6]


def skeleton(name: str) -> str:
    """``name`` as it looks: letters of other scripts that look Latin read as Latin (``а``,
    Cyrillic, -> ``a``), accents and case dropped. Two ids with the same skeleton look alike.

    Example:
        >>> skeleton("аda") == skeleton("ada") != skeleton("adb")
        True
    """
    out = []
    for ch in unicodedata.normalize("NFKD", name):
        if unicodedata.combining(ch):
            continue
        words = unicodedata.name(ch, "").split()
        if ch.isascii() or len(words) < 2 or len(words[-1]) != 1:
            out.append(ch.lower())
        else:
            out.append(words[-1].lower())  # "CYRILLIC SMALL LETTER A" -> "a"
    return "".join(out)


def look_alikes(learners: list[str]) -> list[tuple[str, ...]]:
    """Groups of distinct learner ids that look alike (see :func:`skeleton`)."""
    groups: dict[str, set[str]] = {}
    for learner in learners:
        groups.setdefault(skeleton(learner), set()).add(learner)
    return [tuple(sorted(g)) for g in groups.values() if len(g) > 1]


def spreadsheet_safe(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text, never runs as a formula.

    Example:
        >>> spreadsheet_safe('=HYPERLINK("http://x")'), spreadsheet_safe("ada"), spreadsheet_safe(3)
        ('\\'=HYPERLINK("http://x")', 'ada', 3)
    """
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def write(course: Path, pseudonyms: bool = False) -> tuple[Path, Path]:
    """Write ``gradebook/leaderboard.csv`` and ``.html``; return their paths."""
    out = course / "gradebook"
    key = out / "hidden_instances.key"
    salt = key.read_bytes() if key.is_file() else b"chipsim-ch4"
    table = ranked(best(collect(course), out / "leaderboard.json"))

    def name(e: Entry) -> str:
        return pseudonym(e.learner, salt) if pseudonyms else e.learner

    alike = (
        [] if pseudonyms else look_alikes(sorted({e.learner for v in table.values() for e in v}))
    )
    csv_path, html_path = out / "leaderboard.csv", out / "leaderboard.html"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        # one row per visible instance; the hidden ratio is the learner's, repeated on each
        w.writerow(["part", "rank", "learner", "hidden_geomean_over_reference",
                    "visible_instance", "visible_unit", "visible_theirs",
                    "visible_reference", "check_geomean_over_reference",
                    "check_failed"])  # fmt: skip
        for part, rows in table.items():
            for rank, e in enumerate(rows, 1):
                shown = sorted(e.visible.items()) or [("", {})]
                for inst, n in shown:
                    w.writerow([spreadsheet_safe(v) for v in (
                        part, rank, name(e), f"{e.ratio:.4f}", inst, n.get("unit", ""),
                        n.get("theirs", ""), n.get("reference", ""),
                        "" if e.check is None else f"{e.check:.4f}",
                        "yes" if e.failed_check else "")])  # fmt: skip
    html_path.write_text(_html(table, name, alike), encoding="utf-8")
    return csv_path, html_path


#: The course's landmarks, as rows of the table: (key in the results, or None for the
#: reference itself; what it is), and what each is in each open challenge.
LANDMARKS = (
    (None, "course reference"),
    ("lower_bound", "lower bound"),
    ("baseline", "simple baseline"),
    ("naive", "naive baseline"),
)
#: Landmarks measured on some of the counted instances only (a lower bound exists for the
#: tight arenas, not for the scratchpad's cycles): not comparable with a learner's ratio over
#: all of them, so they follow the ranked rows instead of standing among them.
PARTIAL_LANDMARKS = ("lower_bound",)
LANDMARK_NAMES = {
    "fusion_challenge": {"naive": "no fusion (naive)"},
    "memory_challenge": {
        "lower_bound": (
            "lower bound (peak live bytes, on the tight arenas only: no plan is smaller)"
        ),
        "baseline": "greedy by size (simple baseline)",
        "naive": "no reuse (naive)",
    },
    "instgen_challenge": {
        "baseline": "the code generator's single-buffered program (simple baseline)",
        "naive": "16 x 16 x 16 tiles, single buffered (naive)",
    },
}


def _html(table: dict[str, list[Entry]], name: Any, alike: list[tuple[str, ...]]) -> str:
    esc = html.escape
    parts = ["<!doctype html><meta charset='utf-8'><title>Leaderboard</title>",
             "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
             "style-src 'unsafe-inline'\">",
             "<style>body{font-family:sans-serif;max-width:64em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin-bottom:1em}td,th{padding:.2em .8em;"
             "border-bottom:1px solid #ddd;text-align:right}td:nth-child(2){text-align:left}"
             ".beat{color:#080;font-weight:bold}.mark{color:#666;font-style:italic}"
             ".warn{background:#fff3cd;padding:.5em 1em}th.group{text-align:center;"
             "border-bottom:2px solid #999;font-weight:normal;font-style:italic}</style>",
             "<h1>Open challenges: the class leaderboard</h1>",
             "<p>Ranked by the geometric mean of your result over the reference's on the hidden "
             "instances your grade was computed on, each kind of instance weighing the same, as "
             "in the grade (below 1.000: better than the course's own pass). On a part graded on "
             "a benchmark (the same graphs for everybody), the next column is the same measure "
             "on the graphs drawn to check it for each learner's submission, which nobody could "
             "prepare for: a pass tuned to the benchmark alone does much worse there. The "
             "visible instances are the same for everybody; the grey rows are the course's "
             "landmarks.</p>"]  # fmt: skip
    if alike:
        shown = "; ".join(" / ".join(esc(repr(n)) for n in group) for group in alike)
        parts.append(f"<p class='warn'>Learner ids that look alike: {shown}. Check that they "
                     "are different people.</p>")  # fmt: skip
    if not table:
        parts.append("<p>No graded challenge answers yet: run <code>make grade</code>.</p>")
    for part, rows in table.items():
        visible = sorted({i for e in rows for i in e.visible})
        unit = {i: next(e.visible[i].get("unit", "") for e in rows if i in e.visible)
                for i in visible}  # fmt: skip
        checks = bool(PARTS[part].checks()) if part in PARTS else False
        ranked_on = "the benchmark (ranked)" if checks else "hidden instances (ranked)"
        parts.append(f"<h2>{esc(part)}</h2><table><tr><th colspan='2'></th>"
                     f"<th class='group'>{ranked_on}</th>"
                     + ("<th class='group'>graphs drawn for the learner (the check)</th>"
                        if checks else "")
                     + (f"<th class='group' colspan='{len(visible)}'>visible instances (the "
                        "same for everybody): the result itself</th>" if visible else "")
                     + "</tr><tr><th>#</th><th>learner</th><th>vs reference (geomean)</th>"
                     + ("<th>vs reference (geomean)</th>" if checks else "")
                     + "".join(f"<th>{esc(i)} ({esc(unit[i])})</th>" for i in visible)
                     + "</tr>")  # fmt: skip
        check_cell = {id(e): f"<td>{_ratio(e.check)}</td>" if checks else "" for e in rows}
        marks = {k: geomean([e.landmarks[k] for e in rows if k in e.landmarks])
                 for k, _ in LANDMARKS if k}  # fmt: skip
        lines = [(e.ratio, f"<tr{' class=beat' if e.ratio < 1 else ''}><td>{rank}</td>"
                  f"<td>{esc(name(e))}{' †' if e.failed_check else ''}</td>"
                  f"<td>{e.ratio:.3f}</td>{check_cell[id(e)]}"
                  + "".join(f"<td>{_num(e.visible.get(i, {}).get('theirs'))}</td>"
                            for i in visible) + "</tr>")
                 for rank, e in enumerate(rows, 1)]  # fmt: skip
        after = []
        for key, label in LANDMARKS:
            ratio = 1.0 if key is None else marks.get(key, math.inf)
            if not math.isfinite(ratio):
                continue
            label = LANDMARK_NAMES.get(part, {}).get(key, label)
            cells = "".join(f"<td>{_landmark(rows, i, key or 'reference')}</td>" for i in visible)
            gap = ("<td>1.000</td>" if key is None else "<td></td>") if checks else ""
            row = (ratio, f"<tr class='mark'><td></td><td>{esc(label)}</td>"
                          f"<td>{ratio:.3f}</td>{gap}{cells}</tr>")  # fmt: skip
            (after if key in PARTIAL_LANDMARKS else lines).append(row)
        parts += [row for _, row in sorted(lines, key=lambda r: r[0])]
        parts += [row for _, row in after]
        parts.append("</table>")
        if any(e.failed_check for e in rows):
            parts.append("<p>† The check failed (much less credit on the graphs drawn for the "
                         "submission than on the benchmark): as in the grade, this row's ranked "
                         "number is on the drawn graphs.</p>")  # fmt: skip
    return "\n".join(parts) + "\n"


def _landmark(rows: list[Entry], instance: str, key: str) -> str:
    found = (e.visible.get(instance, {}).get(key) for e in rows)
    return _num(next((v for v in found if isinstance(v, int)), None))


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m grader.feedback.leaderboard")
    ap.add_argument("--course", default=".")
    ap.add_argument("--pseudonyms", action="store_true", help="show stable pseudonyms")
    args = ap.parse_args(argv)
    course = Path(args.course).resolve()
    csv_path, html_path = write(course, args.pseudonyms)
    for group in look_alikes(sorted({e.learner for e in collect(course)})):
        print("WARNING: learner ids that look alike: " + ", ".join(repr(n) for n in group))
    print(f"leaderboard: {html_path} (and {csv_path.name})")
    print(
        "  hidden_geomean_over_reference: the geometric mean of each result over the "
        "reference's on the hidden instances the grade counted, each kind of instance weighing "
        "the same (below 1 beats the course's own pass; lower is better)"
    )
    print(
        "  check_geomean_over_reference: on a part graded on a benchmark, the same on the "
        "graphs drawn to check it for the learner's submission (much above the benchmark's: "
        "a pass tuned to the benchmark)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
