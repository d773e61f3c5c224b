"""Would another credit rule steady the fusion challenge? Its middling spreads over secrets.

The fusion challenge is the one part whose middling moves by more than 0.1 points across course
secrets (``grading_spread.py``). This script grades two middling answers on its hidden
instances of N secrets, keeps each instance's cycles (theirs, the reference's, the naive's),
and scores them again under three credit rules, to see whether the rule, not the number of
instances, is what spreads the points:

* ``line``: the grader's rule (naive 0, reference within the slack 1, linear between; a
  part's points are the mean of its families' mean credit);
* ``bend``: the line bent at part 3's epilogue pass, which earns half (as greedy by size does
  in the memory challenge, :data:`grader.scoring.credit.BASELINE_CREDIT`);
* ``pooled``: a family's credit from its instances' savings pooled (the mean saving over
  naive, against the reference's mean saving), so that an instance with little room to earn
  weighs little.

The two middlings: part 2's chain fusion (``grading_spread.py``'s) and part 3's epilogue
pass (the model solution's ``fuse_epilogues``), handed in as the challenge's answer.

Usage: ``.venv/bin/python benchmarks/fusion_challenge_rules.py --secrets 20``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from grading_spread import middling_functions  # noqa: E402

from grader.problems.hidden import seeds_for  # noqa: E402
from grader.problems.parts import PARTS  # noqa: E402
from grader.scoring.credit import credit  # noqa: E402
from grader.scoring.spread import model_functions, scored  # noqa: E402

PART = PARTS["fusion_challenge"]


def cycles(fns: tuple, secrets: int) -> list[dict[str, dict[str, int]]]:
    """Per secret, ``{instance: its numbers}`` (theirs, reference, naive) for ``fns``."""
    out = []
    for k in range(secrets):
        seeds = seeds_for(f"spread secret {k}".encode(), [PART.id], "a submission")
        out.append({s.instance: s.numbers for s in scored(PART.bind(seeds), fns).counted_scores()})
    return out


def points(run: dict[str, dict[str, int]], rule, baseline: dict[str, dict[str, int]]) -> float:
    families = PART.families()
    by_family: dict[str, list[str]] = {}
    for iid in run:
        by_family.setdefault(families[iid], []).append(iid)
    return PART.points * statistics.fmean(rule(run, iids, baseline) for iids in by_family.values())


def line(run, iids, _):
    return statistics.fmean(
        credit(run[i]["theirs"], run[i]["reference"], run[i]["naive"], slack=PART.slack)
        for i in iids
    )


def bend(run, iids, baseline):
    return statistics.fmean(
        credit(
            run[i]["theirs"],
            run[i]["reference"],
            run[i]["naive"],
            slack=PART.slack,
            baseline=baseline[i]["theirs"],
        )  # fmt: skip
        for i in iids
    )


def pooled(run, iids, _):
    saved = statistics.fmean(1 - run[i]["theirs"] / run[i]["naive"] for i in iids)
    room = statistics.fmean(
        1 - min(run[i]["naive"], run[i]["reference"] * (1 + PART.slack)) / run[i]["naive"]
        for i in iids
    )
    return min(1.0, max(0.0, saved / room)) if room > 0 else 1.0


def middlings() -> dict[str, tuple]:
    """The two middling answers to the challenge: ``{name: functions}``."""
    return {
        "chain fusion (part 2)": middling_functions()[PART.id],
        "epilogue pass (part 3)": (model_functions()["fusion_epilogue"][0],),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secrets", type=int, default=20)
    args = ap.parse_args()
    clock = time.perf_counter()
    runs = {name: cycles(fns, args.secrets) for name, fns in middlings().items()}
    epilogue = runs["epilogue pass (part 3)"]
    print(f"| middling | rule | min - max | spread | mean |  ({args.secrets} secrets)")
    print("|---|---|---|---:|---:|")
    for name, per_secret in runs.items():
        for rule in (line, bend, pooled):
            p = [points(run, rule, epilogue[k]) for k, run in enumerate(per_secret)]
            print(f"| {name} | {rule.__name__} | {min(p):.3f} - {max(p):.3f} | "
                  f"{max(p) - min(p):.3f} | {statistics.fmean(p):.3f} |")  # fmt: skip
    print(f"({time.perf_counter() - clock:.0f} s)")


if __name__ == "__main__":
    main()
