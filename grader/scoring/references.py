"""The grader's own numbers for an instance: the problem rebuilt from its definition, and what
the part's reference and naive strategies make of it.

Everything here is the grader's, built in its own process from pristine definitions
(:mod:`grader.problems.parts`), once per process (the builders are deterministic); the checks
(:mod:`~grader.scoring.checks`) compare a learner's answer with it.

Example:
    >>> numbers = baseline("fusion_chains", "chains_a")
    >>> numbers["reference"] < numbers["naive"]
    True
"""

from __future__ import annotations

import functools
from typing import Any

from grader.problems.families import (
    compile_with,
    naive_cycles,
    plan_records,
    reference_partition,
    search_plan,
)
from grader.problems.kernels import generated_program, program_cycles
from grader.problems.part import Instance
from grader.problems.parts import ALIGNMENT, CHIP, PARTS, get_part

#: The caches below hold every instance of the largest part, so scoring one part builds each
#: of its instances once.
LARGEST_PART = max(len(part.instances) for part in PARTS.values())


@functools.lru_cache(maxsize=LARGEST_PART)
def built(part_id: str, instance_id: str, seed: int | None = None) -> Any:
    """The instance object, built once per grader process (builders are deterministic);
    ``seed``: a hidden instance's seed (the grader's, see :mod:`~grader.problems.hidden`)."""
    return _instance(part_id, instance_id, seed).build()


def _instance(part_id: str, instance_id: str, seed: int | None) -> Instance:
    part = get_part(part_id)
    return (part if seed is None else part.bind({instance_id: seed})).instance(instance_id)


def target_chip() -> Any:
    """The chip every exercise targets (:data:`~grader.problems.parts.CHIP`)."""
    from chipsim.hw import get_chip

    return get_chip(CHIP)


def fusion_strategy(name: str, graph: Any) -> Any:
    """The partition a named reference strategy gives for ``graph``."""
    from chipsim.passes.fusion import autotune, fuse_elementwise_chains, no_fusion, rule_fusion

    chip = target_chip()
    if name == "reference":  # remembered: the instance's redraw test asked for it already
        return reference_partition(graph)
    if name == "reference_window":  # the rules and the autotuner on the estimates alone
        return autotune(graph, chip, rule_fusion(graph, chip))
    if name == "elementwise":
        return fuse_elementwise_chains(graph, chip)
    if name == "epilogue":
        from grader.scoring.epilogue import epilogue_fusion

        return epilogue_fusion(graph, chip)
    if name == "none":
        return no_fusion(graph, chip)
    raise KeyError(f"unknown fusion strategy {name!r}")


def plan_strategy(name: str, records: Any) -> Any:
    """The plan a named planner gives (``search``: the memory challenge's reference,
    :func:`~grader.problems.families.search_plan`)."""
    from chipsim.passes.memory import get_planner

    if name == "search":
        return search_plan(records)
    return get_planner(name)(records, alignment=ALIGNMENT)


@functools.lru_cache(maxsize=LARGEST_PART)
def baseline(part_id: str, instance_id: str, seed: int | None = None) -> dict[str, Any]:
    """Reference and naive numbers (and the reference's program or plan) for one instance."""
    part = get_part(part_id)
    inst = part.instance(instance_id)
    obj = built(part_id, instance_id, seed)
    simple = (part.baseline,) if part.baseline else ()
    if inst.kind == "fusion":
        progs = {n: compile_with(obj, fusion_strategy(n, obj)) for n in (*part.reference, *simple)}
        best = min(part.reference, key=lambda n: (progs[n].report.cycles, part.reference.index(n)))
        naive = naive_cycles(obj)
        out = {"reference": progs[best].report.cycles, "naive": naive, "shown": progs[best]}
        return out | ({"baseline": progs[part.baseline].report.cycles} if simple else {})
    if inst.kind == "plan":
        records = plan_records(obj)
        plans = {n: plan_strategy(n, records) for n in (*part.reference, *simple)}
        progs = {n: compile_with(obj, plan=p) for n, p in plans.items()}
        best = min(part.reference, key=lambda n: (progs[n].report.cycles, part.reference.index(n)))
        naive = compile_with(obj, plan=plan_strategy("naive", records)).report.cycles
        out = {
            "reference": progs[best].report.cycles,
            "naive": naive,
            "shown": progs[best],
            "records": records,
        }
        return out | ({"baseline": progs[part.baseline].report.cycles} if simple else {})
    if inst.kind == "arena":
        plans = {n: plan_strategy(n, obj) for n in (*part.reference, *simple)}
        best = min((plans[n] for n in part.reference), key=lambda p: p.arena_size)
        out = {
            "reference": best.arena_size,
            "naive": plan_strategy("naive", obj).arena_size,
            "lower_bound": best.lower_bound,
            "shown": best,
        }
        return out | ({"baseline": plans[part.baseline].arena_size} if simple else {})
    if inst.kind == "program":
        ran = {n: run_strategy(n, obj) for n in part.reference}  # shown: run in full
        naive = part.naive or "smallest"
        cycles = {n: ran[n].cycles if n in ran else program_cycles(obj, n)
                  for n in sorted({*part.reference, *simple, naive})}  # fmt: skip
        best = min(part.reference, key=lambda n: (cycles[n], part.reference.index(n)))
        out = {"reference": cycles[best], "naive": cycles[naive], "shown": ran[best],
               "overlap": ran[best].overlap}  # fmt: skip
        return out | ({"baseline": cycles[part.baseline]} if simple else {})
    raise KeyError(f"instance kind {inst.kind!r} has no baseline")


class Ran:
    """A kernel's program after a timing run: what the scoring and the picture read."""

    def __init__(self, builder: Any, report: Any = None) -> None:
        """``report``: the program's report when it was run already (cycles do not depend
        on the values), else a timing run makes it."""
        from chipsim.runtime.handwritten import dma_overlap, run_kernel

        self.builder = builder
        self.report = report if report is not None else run_kernel(builder, functional=False)[1]
        self.cycles = self.report.cycles
        self.overlap = dma_overlap(self.report.records)


def run_strategy(name: str, graph: Any) -> Ran:
    """The code generator's program for a one-kernel ``graph``, run (the strategies of
    :func:`~grader.problems.kernels.generated_program`)."""
    return Ran(generated_program(name, graph))
