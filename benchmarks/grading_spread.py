"""How much a notebook's points move with the course secret (issue: scores stable across draws).

Every submission is graded on hidden instances drawn for it, so the same notebook meets other
instances in another course run. This grades two solutions of every part on the hidden
instances of N course secrets, in-process with the grader's own scoring
(:mod:`grader.scoring.spread`), and prints each part's points per solution: min, max, spread
(max - min) and mean. Target: a spread of at most 0.1 points per part, and the model solution
at full marks on every secret.

* ``model``: the course's model solution (``solutions/``), as a learner who solved it all.
* ``middling``: a plausible half-way learner, part by part: patterns right for the cheap ops
  only; one kernel for everything (over-fusion) in part 2; chains without epilogues in part 3
  and as the challenge; liveness that forgets graph outputs live to the end; best fit where
  first fit is asked; first fit where greedy by size is asked; as the memory challenge, the
  smallest arena of four orders (by size, which is greedy by size, by size x lifetime, by
  lifetime, by first use), each placed first fit and best fit, without a search (a new
  learner's first planner on a walk of the course; greedy by size alone earns exactly the
  baseline's credit on every instance, so its spread is 0 by construction); unit costs that
  forget the SRAM floor and the SIMD issue slots of an exp or a gelu; one fixed tile size
  (64 x 64 single buffered, 32 x 64 double buffered) where tiles are to be chosen; the
  single-buffered program of part 2 as the instruction-generation challenge.

    .venv/bin/python benchmarks/grading_spread.py --secrets 20
    .venv/bin/python benchmarks/grading_spread.py --secrets 8 --per-instance --parts instgen_double
    .venv/bin/python benchmarks/grading_spread.py --notebooks benchmarks/notebooks/new_learner

``--notebooks DIR`` grades a third solution, the notebooks in DIR (one folder per assignment,
as learners hand them in). ``benchmarks/notebooks/new_learner`` holds a new learner's, written
on a walk of the course from the README (2026-12-05): answers the course did not write.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

from chipsim.ir import Pattern
from grader.problems.hidden import seeds_for
from grader.problems.parts import PARTS
from grader.scoring.partscore import CHECK_MARGIN
from grader.scoring.spread import (
    ROOT,
    model_functions,
    notebook_functions,
    notebook_namespace,
    scored,
    spread,
)


def middling_functions() -> dict:
    """The half-way learner's functions (built on the model notebooks' own helpers)."""
    fusion = notebook_namespace(ROOT / "solutions" / "fusion" / "fusion.ipynb")
    memory = notebook_namespace(ROOT / "solutions" / "memory_planning" / "memory_planning.ipynb")
    cheap = {"add", "sub", "mul", "div", "relu", "exp", "tanh", "neg", "sigmoid", "gelu"}

    def pattern_of(op):
        return Pattern.ELEMENTWISE if op in cheap else Pattern.REDUCTION

    def may_fuse(p, c):
        return p in (Pattern.ELEMENTWISE, Pattern.BROADCAST) and c == p

    def everything(graph, chip):
        ops = [i for i, n in enumerate(graph.nodes) if n.op != "constant"]
        return fusion["as_partition"](graph, [ops])

    def usage_records(graph, schedule):
        names, born, last = graph.names(), {}, {}
        for t, node in enumerate(schedule):
            born[node.output] = t
            for v in node.inputs:
                last[v] = t
        values = list(graph.inputs) + [n.output for n in schedule if n.op != "constant"]
        rec = memory["UsageRecord"]
        return [rec(names[v], v.type.nbytes, born.get(v, 0), last.get(v, born.get(v, 0)) + 1)
                for v in values]  # fmt: skip

    def best_fit_plan(records, alignment=64):
        order = sorted(range(len(records)), key=lambda i: (records[i].first, i))
        offsets = memory["place"](records, order, alignment, True)
        return memory["MemoryPlan"](records, offsets, alignment, "best fit")

    orders = (lambda r: (-r.size, r.first), lambda r: (-r.size * (r.last - r.first), r.first),
              lambda r: (-(r.last - r.first), -r.size), lambda r: (r.first, -r.size))  # fmt: skip

    def best_order(records, alignment=64):  # greedy by size and three other orders, no search
        def placed(key, fit):
            order = sorted(range(len(records)), key=lambda i: key(records[i]))
            return memory["MemoryPlan"](records, memory["place"](records, order, alignment, fit),
                                        alignment)  # fmt: skip

        plans = [placed(key, fit) for key in orders for fit in (True, False)]
        return min(plans, key=lambda p: p.arena_size)

    # instruction generation: a fresh copy of the model notebook's namespace, so the changes
    # below reach only the middling learner's functions
    ig = notebook_namespace(
        ROOT / "solutions" / "instruction_generation" / "instruction_generation.ipynb"
    )
    ceil_div = ig["ceil_div"]

    def no_sram_floor(fixed, work, per_cycle, sram_bytes, chip):
        return fixed + ceil_div(work, per_cycle)  # forgets that SRAM bounds a compute unit

    ig["compute_cycles"] = no_sram_floor
    real_get_op = ig["get_op"]

    class OneSlot:  # forgets that an exp or a gelu takes several SIMD issue slots
        def __init__(self, op):
            self.op = real_get_op(op)
            self.vector_slots = 1

    ig["get_op"] = OneSlot

    def fixed_tiles(rows, cols, buffers):
        def lower(kb):  # one tile size for every kernel, the largest inner block that fits
            ext = kb.extents
            r, c = min(rows, ext["rows"]), min(cols, ext["cols"])
            inner = ext["inner"]
            while ig["emit"](ig["KernelBuilder"](kb.graph, kb.chip), r, c, inner, buffers) is None:
                if inner <= 16:
                    return ig["tile_kernel"](kb)  # nothing of that size fits: part 2's answer
                inner = max(16, inner // 2)
            return ig["emit"](kb, r, c, inner, buffers)

        return lower

    return {
        "instgen_units": (ig["choose_unit"],),
        "instgen_tiling": (fixed_tiles(64, 64, 1),),
        "instgen_double": (fixed_tiles(32, 64, 2),),
        "instgen_challenge": (ig["tile_kernel"],),
        "fusion_patterns": (pattern_of, may_fuse),
        "fusion_chains": (everything,),
        "fusion_epilogue": (fusion["fuse_chains"],),
        "fusion_challenge": (fusion["fuse_chains"],),
        "memory_liveness": (usage_records,),
        "memory_first_fit": (best_fit_plan,),
        "memory_greedy": (memory["first_fit_plan"],),
        "memory_challenge": (best_order,),
    }


def benchmark_solutions(model: dict, middling: dict) -> dict:
    """Two more answers to the fusion challenge, whose points come from a benchmark: part 3's
    epilogue pass (the honest pass whose credit moves most from graph to graph, so the one
    nearest to failing the check by chance) and a table of the reference's answers for the
    benchmark's graphs, prepared offline, with the middling's chain pass for any other graph
    (what the check is there to catch)."""
    from chipsim.passes.fusion import Partition
    from grader.problems.families import reference_partition

    part = PARTS["fusion_challenge"]
    table = {i.id: reference_partition(i.build()).groups for i in part.graded() if i.benchmark}
    (chains,) = middling["fusion_challenge"]

    def prepared(graph, chip):
        if graph.name in table:  # a hidden instance is named after its id
            return Partition(table[graph.name], graph=graph)
        return chains(graph, chip)

    return {
        "epilogue pass": {"fusion_challenge": model["fusion_epilogue"]},
        "prepared table": {"fusion_challenge": (prepared,)},
    }


def per_instance(part_id: str, fns: tuple, secrets: int) -> None:
    """Each counted instance's credit over the secrets (mean, standard deviation, min-max):
    where a part's spread comes from."""
    credits: dict[str, list[float]] = {}
    for k in range(secrets):
        seeds = seeds_for(f"spread secret {k}".encode(), [part_id], "a submission")
        for s in scored(PARTS[part_id].bind(seeds), fns).counted_scores():
            credits.setdefault(s.instance, []).append(s.fraction)
    print(f"| {part_id} instance | mean credit | sd | min | max |")
    print("|---|---:|---:|---:|---:|")
    for name, xs in credits.items():
        print(f"| {name} | {statistics.fmean(xs):.3f} | {statistics.pstdev(xs):.3f} | "
              f"{min(xs):.3f} | {max(xs):.3f} |")  # fmt: skip


def two_runs_differ_by(scores: tuple[float, ...]) -> float:
    """How far apart the points of one notebook in two course runs are, on average: the mean
    of |a - b| over every pair of secrets (what a learner who grades twice, in two fresh
    gradebooks, would see; the range over 20 secrets is several times that).

    Example:
        >>> two_runs_differ_by((1.0, 1.0, 2.0))
        0.6666666666666666
    """
    pairs = [(a, b) for i, a in enumerate(scores) for b in scores[i + 1 :]]
    return statistics.fmean(abs(a - b) for a, b in pairs) if pairs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secrets", type=int, default=20)
    ap.add_argument("--parts", nargs="*", default=list(PARTS))
    ap.add_argument(
        "--per-instance", action="store_true", help="the middling's credit per instance instead"
    )
    ap.add_argument(
        "--notebooks",
        metavar="DIR",
        help="grade these notebooks too (DIR/<assignment>/<assignment>.ipynb), e.g. a learner's",
    )
    ap.add_argument(
        "--solutions",
        nargs="*",
        help="only these solutions (model, middling; on the fusion challenge also "
        "'epilogue pass' and 'prepared table')",
    )
    args = ap.parse_args()
    clock = time.perf_counter()
    if args.per_instance:
        middling = middling_functions()
        for pid in args.parts:
            per_instance(pid, middling[pid], args.secrets)
        print(f"wall time {time.perf_counter() - clock:.0f} s")
        return
    solutions = {"model": model_functions(), "middling": middling_functions()}
    if "fusion_challenge" in args.parts:
        solutions.update(benchmark_solutions(solutions["model"], solutions["middling"]))
    if args.notebooks:
        solutions[Path(args.notebooks).name] = notebook_functions(Path(args.notebooks))
    if args.solutions:
        solutions = {k: v for k, v in solutions.items() if k in args.solutions}
    rows = spread(args.parts, solutions, args.secrets, progress=True)
    print(f"machine: {platform.machine()}, Python {platform.python_version()}; "
          f"{args.secrets} course secrets")  # fmt: skip
    print("| part | points | solution | min | max | spread | mean | sd | two runs differ by |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = (
            r.part,
            f"{PARTS[r.part].points:g}",
            r.solution,
            f"{min(r.scores):.3f}",
            f"{max(r.scores):.3f}",
            f"{r.spread:.3f}",
            f"{statistics.fmean(r.scores):.3f}",
            f"{statistics.pstdev(r.scores):.3f}",
            f"{two_runs_differ_by(r.scores):.3f}",
        )
        print("| " + " | ".join(cells) + " |")
    checked = [r for r in rows if r.gaps]
    if checked:  # a part graded on a benchmark: how near each solution came to failing its check
        print(f"\nthe check (drawn graphs' credit minus the benchmark's; fails below "
              f"-{CHECK_MARGIN:g}):")  # fmt: skip
        print("| part | solution | lowest | mean | highest | secrets that failed it |")
        print("|---|---|---:|---:|---:|---:|")
        for r in checked:
            print(f"| {r.part} | {r.solution} | {min(r.gaps):+.3f} | "
                  f"{statistics.fmean(r.gaps):+.3f} | {max(r.gaps):+.3f} | "
                  f"{r.failed_checks} of {len(r.gaps)} |")  # fmt: skip
    print(f"wall time {time.perf_counter() - clock:.0f} s")


if __name__ == "__main__":
    main()
