"""How often a fusion search lowers a kernel it has lowered before: what a compile cache would save.

A pass that searches with the simulator (the fusion challenge's model solution: hill climbing
over merges, moves and splits) compiles the whole graph for every partition it tries, and each
compile asks for every kernel's lowering again (``chipsim.codegen.link``), though a step
changes one or two of them. This script runs the model's ``my_fusion`` on the fusion
challenge's hidden instances of one secret and counts the kernels lowered, and how many of
them were lowered before in the same search:

* ``exact``: the same nodes, the same address of every input and output, the same SRAM
  window and scratch: a cache keyed on everything ``lower`` reads would return them as they
  are;
* ``relocatable``: the same nodes, memory levels and window *size*, the offsets may differ:
  a cache of programs that can be moved to other addresses would return them.

Since 2026-12-05 chipsim keeps such a cache (``chipsim.codegen.link``'s memo, keyed on the
exact kernel and its name): the ``exact`` column is about its hit rate, and ``pass s`` the
search's time with it. The kernels are counted where ``link`` asks for each one's lowering,
before the memo answers. (Simulation is not counted: in a graph launch the kernels are not
separated by a barrier, so a kernel's cycles depend on its neighbours.)

Usage: ``.venv/bin/python benchmarks/lowering_reuse.py [--secret TEXT]``
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

import chipsim.codegen.link as link  # noqa: E402
from chipsim.hw import get_chip  # noqa: E402
from grader.notebook import CHIP  # noqa: E402
from grader.problems.hidden import seeds_for  # noqa: E402
from grader.problems.parts import PARTS  # noqa: E402
from grader.sandbox.view import withheld  # noqa: E402
from grader.scoring.spread import model_functions  # noqa: E402


def exact(kernel) -> tuple:
    where = tuple(sorted((id(v), loc.level, loc.offset) for v, loc in kernel.location.items()))
    scratch = kernel.scratch and (kernel.scratch.level, kernel.scratch.offset)
    return tuple(map(id, kernel.nodes)), where, kernel.sram_window, scratch


def relocatable(kernel) -> tuple:
    where = tuple(sorted((id(v), loc.level) for v, loc in kernel.location.items()))
    lo, hi = kernel.sram_window or (0, 0)
    return tuple(map(id, kernel.nodes)), where, hi - lo, kernel.scratch is not None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secret", default="spread secret 0")
    args = ap.parse_args()
    part = PARTS["fusion_challenge"]
    part = part.bind(seeds_for(args.secret.encode(), [part.id], "a submission"))
    my_fusion = model_functions()[part.id][0]
    lowered = link._lowered
    print("| instance | kernels lowered | exact repeats | relocatable repeats | pass s |")
    print("|---|---:|---:|---:|---:|")
    for inst in part.hidden():
        graph, seen, counts = inst.build(), {"exact": set(), "relocatable": set()}, {}

        def counting(kernel, *a, seen=seen, counts=counts):
            counts["lowered"] = counts.get("lowered", 0) + 1
            for name, key in (("exact", exact), ("relocatable", relocatable)):
                k = key(kernel)
                counts[name] = counts.get(name, 0) + (k in seen[name])
                seen[name].add(k)
            return lowered(kernel, *a)

        link._lowered = counting
        clock = time.perf_counter()
        try:
            with withheld(part.assignment), contextlib.redirect_stdout(io.StringIO()):
                my_fusion(graph, get_chip(CHIP))
        finally:
            link._lowered = lowered
        n = counts["lowered"]
        print(f"| {inst.id} | {n:,} | {counts['exact'] / n:.0%} | "
              f"{counts['relocatable'] / n:.0%} | {time.perf_counter() - clock:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
