"""Would another credit curve steady the fusion challenge's score? (issue 21 item 7)

The fusion challenge is the one part whose middling score moves more than 0.1 points across
course secrets (``grading_spread.py``). This asks whether the *curve* is to blame rather than
the instances: it draws the challenge's hidden instances of N secrets (the same secrets as
``grading_spread.py``), simulates on each the course's passes that a learner would hand in
(``elementwise``: part 2's chains; ``epilogue``: part 3's answer) beside one kernel per op and
the reference, and scores both answers under four curves:

- ``line``: today's, 0 at one kernel per op, 1 within the slack of the reference;
- ``bend@epilogue`` / ``bend@chains``: the line bent at a baseline that earns
  ``BASELINE_CREDIT``, as the memory and instruction-generation challenges do;
- ``sum``: one credit per secret from the summed cycles of its instances.

For each it prints the points' mean, range and standard deviation over the secrets, and the
instances per stratum that would bring the range within 0.1 (from the per-instance
variances: the range of 20 normal draws is about 3.7 standard deviations).

    .venv/bin/python benchmarks/fusion_challenge_curves.py --secrets 40

Cycles are simulated, so the numbers are the same on every machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from grader.problems.families import compile_with
from grader.problems.hidden import seeds_for
from grader.problems.parts import PARTS
from grader.scoring.credit import credit
from grader.scoring.references import fusion_strategy

PART = "fusion_challenge"
ANSWERS = ("elementwise", "epilogue")
RANGE_OVER_SD = 3.7  # expected range of 20 normal draws, in standard deviations


def cycles(secrets: int) -> list[dict]:
    """One row per hidden instance and secret: the cycles of each strategy."""
    part, rows = PARTS[PART], []
    for k in range(secrets):
        seeds = seeds_for(f"spread secret {k}".encode(), [PART], "a submission")
        for inst in part.bind(seeds).hidden():
            graph = inst.build()
            row = {"secret": k, "instance": inst.id, "naive": compile_with(graph).report.cycles}
            for name in (*part.reference, *ANSWERS):
                row[name] = compile_with(graph, fusion_strategy(name, graph)).report.cycles
            row["best"] = min(row[name] for name in part.reference)
            rows.append(row)
    return rows


def report(rows: list[dict]) -> None:
    part = PARTS[PART]
    slack, strata = part.slack, len({r["instance"] for r in rows})
    curves = {"line": None, "bend@epilogue": "epilogue", "bend@chains": "elementwise"}
    print("| curve | answer | mean | min - max | range | sd | instances per stratum for 0.1 |")
    print("|---|---|---:|---|---:|---:|---:|")
    for curve, bend in curves.items():
        for answer in ANSWERS:
            per_secret, per_instance = defaultdict(list), defaultdict(list)
            for r in rows:
                c = credit(r[answer], r["best"], r["naive"],
                           baseline=r[bend] if bend else None, slack=slack)  # fmt: skip
                per_secret[r["secret"]].append(c)
                per_instance[r["instance"]].append(c)
            points = [part.points * statistics.fmean(v) for v in per_secret.values()]
            variance = sum(statistics.pvariance(v) for v in per_instance.values())
            sd_one = part.points * (variance / strata**2) ** 0.5  # one instance per stratum
            need = (RANGE_OVER_SD * sd_one / 0.1) ** 2
            print(f"| {curve} | {answer} | {statistics.fmean(points):.3f} | {min(points):.3f} - "
                  f"{max(points):.3f} | {max(points) - min(points):.3f} | "
                  f"{statistics.pstdev(points):.3f} | {need:.0f} |")  # fmt: skip
    for answer in ANSWERS:
        sums = defaultdict(lambda: [0, 0, 0])
        for r in rows:
            s = sums[r["secret"]]
            s[0], s[1], s[2] = s[0] + r["naive"], s[1] + r[answer], s[2] + r["best"]
        points = [part.points * credit(y, b, n, slack=slack) for n, y, b in sums.values()]
        print(f"| sum | {answer} | {statistics.fmean(points):.3f} | {min(points):.3f} - "
              f"{max(points):.3f} | {max(points) - min(points):.3f} | "
              f"{statistics.pstdev(points):.3f} | - |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secrets", type=int, default=40)
    args = ap.parse_args()
    started = time.perf_counter()
    rows = cycles(args.secrets)
    report(rows)
    print(f"\n{len(rows)} instances of {args.secrets} secrets in "
          f"{time.perf_counter() - started:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
