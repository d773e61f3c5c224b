"""Why a fusion answer is slower than the reference's, in one sentence for the feedback.

The grader has both programs compiled (the learner's partition and the reference's); this
names the learner's slowest kernel that the reference does not have and what is wrong with
it: the reference runs its ops inside a larger kernel (fused too little), it spills to DRAM,
or it keeps so much on chip that its tiles are thinner than the reference's (fused too much).
"""

from __future__ import annotations

from typing import Any

from chipsim.i18n import tr
from grader.scoring.references import target_chip


def _contraction(op: str) -> bool:
    from chipsim.ir import Pattern, get_op

    return get_op(op).pattern == Pattern.CONTRACTION


def slower_kernel(theirs: Any, reference: Any) -> str:
    """Why a partition is slower than the reference's, in one sentence: its slowest kernel
    that the reference does not have, and what is wrong with it: the reference runs its ops
    inside a larger kernel (fuse more), it spills, or its tiles are thinner than the
    reference's because it keeps too much on chip (fuse less)."""
    from chipsim.codegen.planning import plan_kernel

    chip = target_chip()
    ref_groups = {frozenset(g) for g in reference.partition.groups}
    mine = [
        (stat.cycles, spec, group)
        for spec, group, stat in zip(
            theirs.kernels, theirs.partition.groups, theirs.report.kernels, strict=False
        )
        if frozenset(group) not in ref_groups
    ]
    if not mine:
        return ""
    cycles, spec, group = max(mine, key=lambda m: m[0])
    kp = plan_kernel(spec, chip)
    ops = tr("1 op") if len(group) == 1 else tr("{n} ops", n=len(group))
    head = tr("Your kernel {name} ({ops}) takes {cycles:,} cycles", name=spec.name, ops=ops,
              cycles=cycles)  # fmt: skip
    if kp.mode == "spill":
        return head + tr(
            ": not even one row of its tensors fits the SRAM, so its intermediates go to DRAM "
            "and back ({bytes:,} B of DRAM scratch). Split it where a tensor is large.",
            bytes=kp.scratch_bytes,
        )
    inside = [
        (len(g), k.name, sum(_contraction(reference.graph.nodes[i].op) for i in g))
        for g, k in zip(reference.partition.groups, reference.kernels, strict=False)
        if frozenset(group) < frozenset(g)
    ]
    if inside:  # fused too little: the reference keeps these results on chip
        n, name, contractions = inside[0]
        said = head + tr(
            ": the reference runs its ops inside a larger kernel, {name} ({n} ops), so their "
            "results stay on chip instead of a round trip through DRAM. Fuse more there.",
            name=name,
            n=n,
        )
        if contractions > 1:  # beyond part 1's rule, which a learner may take as a law
            said += " " + tr(
                "That kernel holds {k} matmuls or convs: part 1's rule never joins two, but "
                "the reference's autotuner keeps any merge that lowers the measured cycles, "
                "and your pass may do the same.",
                k=contractions,
            )
        return said
    if kp.mode == "blocked":
        return head + tr(": it runs as {tiles} blocks of its contraction.", tiles=kp.tiles)
    ref_rows = [plan_kernel(k, chip).rows_per_tile for k in reference.kernels]
    if kp.rows_per_tile >= max(ref_rows, default=kp.rows_per_tile) or len(group) == 1:
        # (one op cannot be fused less: only the grouping around it differs)
        return head + tr(": the reference groups these ops into other kernels; compare the "
                         "two timelines.")  # fmt: skip
    return head + tr(
        ": its tiles hold everything its {n} ops touch, {bytes:,} B of SRAM for {rows} row(s) "
        "at a time ({tiles} tiles), where the reference's kernels work on up to {ref_rows} rows "
        "per tile. A kernel that keeps too much on chip gets thin tiles: fuse less there.",
        n=len(group),
        bytes=kp.sram_bytes,
        rows=kp.rows_per_tile,
        tiles=kp.tiles,
        ref_rows=max(ref_rows, default=kp.rows_per_tile),
    )
