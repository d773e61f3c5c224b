"""Where one submission's grading time goes, part by part: drawing, the learner's pass, scoring.

For every part of the chosen assignments, with the course's model solution as the learner, on
the hidden instances one secret draws for one submission, in this process (no kernel, no
nbgrader): the seconds to build the hidden instances (which the kernel does too, from the data
the grader hands it), to run the model's functions on them (the learner's share of the test
cell) and to score the answers (the grader's own work: the reference strategies, the naive
answer and the answer itself, compiled and simulated). What ``autograde_throughput.py``
measures end to end, split up.

Usage: ``.venv/bin/python benchmarks/grading_cost.py [fusion memory_planning ...]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.notebook import _answer_one  # noqa: E402
from grader.problems.hidden import seeds_for  # noqa: E402
from grader.problems.parts import ASSIGNMENTS, PARTS  # noqa: E402
from grader.sandbox.view import withheld  # noqa: E402
from grader.scoring.answer import encode  # noqa: E402
from grader.scoring.grade import score_answer  # noqa: E402
from grader.scoring.spread import model_functions  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("assignments", nargs="*", default=list(ASSIGNMENTS))
    ap.add_argument("--secret", default="grading cost")
    args = ap.parse_args()
    fns = model_functions()
    print("| part | hidden instances | build s | model's pass s | scoring s | points |")
    print("|---|---:|---:|---:|---:|---:|")
    for assignment in args.assignments:
        for pid in ASSIGNMENTS[assignment]:
            part = PARTS[pid].bind(seeds_for(args.secret.encode(), [pid], "a submission"))
            t0 = time.perf_counter()
            problems = {i.id: (i.kind, i.build()) for i in part.hidden()}
            t1 = time.perf_counter()
            with withheld(part.assignment), contextlib.redirect_stdout(io.StringIO()):
                answers = {i: _answer_one(i, k, obj, fns[pid]) for i, (k, obj) in problems.items()}
            t2 = time.perf_counter()
            score = score_answer(
                part, encode(pid, answers), points=part.points, required=list(problems)
            )
            t3 = time.perf_counter()
            print(f"| {pid} | {len(problems)} | {t1 - t0:.1f} | {t2 - t1:.1f} | {t3 - t2:.1f} | "
                  f"{score.score:g} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
