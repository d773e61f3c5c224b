"""How far the model solution stays from losing points on an open challenge.

An open challenge gives full credit within a slack of the reference (``CHALLENGE_SLACK``), and
the course's model solution must earn full marks on every draw of hidden instances
(``tests/grading/test_grading_fairness.py`` checks a few secrets; the red team grades some forty
submissions, each with its own draw). A grade that is full only by a hair is a test that fails
one run in many. This draws the hidden instances of N (secret, submission) pairs, runs the
model solution on each, and prints, per instance family, how its result compares with the
reference (theirs / reference, in cycles): the worst ratio and how many instances were above
1.02. Full marks need the worst ratio at or below 1 + the part's slack.

    .venv/bin/python benchmarks/challenge_margin.py --draws 40 --part fusion_challenge
"""

from __future__ import annotations

import argparse
import platform
import time
from collections import defaultdict

from grader.problems.hidden import seeds_for
from grader.problems.parts import PARTS
from grader.scoring.spread import model_functions, scored


def ratios(part_id: str, fns, draw: int) -> dict[str, float]:
    """``instance id -> theirs / reference`` for one draw (secret and submission from ``draw``)."""
    seeds = seeds_for(f"margin secret {draw}".encode(), [part_id], f"margin submission {draw}")
    scored_part = scored(PARTS[part_id].bind(seeds), fns)
    return {
        s.instance: s.numbers["theirs"] / s.numbers["reference"]
        for s in scored_part.instances
        if s.numbers.get("reference")
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=40)
    ap.add_argument("--part", default="fusion_challenge")
    args = ap.parse_args()
    fns = model_functions()[args.part]
    by_family: dict[str, list[float]] = defaultdict(list)
    start = time.monotonic()
    for k in range(args.draws):
        for iid, r in ratios(args.part, fns, k).items():
            by_family[iid.rstrip("0123456789")].append(r)
    took = time.monotonic() - start
    slack = PARTS[args.part].slack
    print(f"# {args.part}, {args.draws} draws, slack {slack:.0%}; "
          f"{platform.node()}, {took:.0f} s")  # fmt: skip
    print(f"{'family':16} {'instances':>9} {'worst':>7} {'> 1.02':>7} {'full?':>6}")
    for family, rs in sorted(by_family.items()):
        worst = max(rs)
        above = sum(r > 1.02 for r in rs)
        ok = "yes" if worst <= 1 + slack else "NO"
        print(f"{family:16} {len(rs):9d} {worst:7.4f} {above:7d} {ok:>6}")


if __name__ == "__main__":
    main()
