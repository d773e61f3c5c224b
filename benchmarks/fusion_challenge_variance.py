"""Where the fusion challenge's spread comes from, and what would take it to 0.1 points.

A middling answer's points on the fusion challenge move with the course secret by more than
the 0.1 points of issue 21 (``grading_spread.py``). A part's points are a mean of per-instance
credits, so their spread is the spread of one instance's credit over the square root of the
number of instances. This script measures that per-instance spread and asks whether
something about an instance that the grader could *stratify on* (give every submission the
same mix of) explains it, as the strata already do for the sizes.

It grades the two middlings of ``fusion_challenge_rules.py`` (part 2's chain fusion and
part 3's epilogue pass, handed in as the challenge's answer) on the hidden instances of N
secrets and fits each family's per-instance credit by least squares on three nested sets of
answer-agnostic covariates:

* ``strata``: the stratum (what the grader stratifies on today);
* ``+ shape``: also the leading input dimension (a CNN's batch, a block's sequence), the
  widths of the contractions (mean, min, max, standard deviation) and how many of each
  elementwise op the graph has (a CNN's activations, a block's extra ops);
* ``+ program``: also three numbers of the unfused program on the chip: the share of its
  cycles in kernels off the tensor unit, the share in such kernels that move DRAM bytes, and
  their share of the DRAM bytes.

The residual standard deviation (per degree of freedom left) is what stratifying on those
covariates could at best leave (a main-effects fit: strata on all of them at once would be
needed to get there). From the spread within strata the script prints how many instances,
in the part's mix (one transformer block per two CNNs, each kind half the points), a
20-secret range of 0.1 points takes (range ~ 3.735 standard deviations for 20 normal draws).

    .venv/bin/python benchmarks/fusion_challenge_variance.py --secrets 20
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from fusion_challenge_rules import PART, middlings  # noqa: E402

from chipsim.ir import OPS, Pattern  # noqa: E402
from chipsim.passes.fusion.rules import op_pattern  # noqa: E402
from grader.problems.families import compile_with  # noqa: E402
from grader.problems.hidden import seeds_for  # noqa: E402
from grader.scoring.spread import scored  # noqa: E402

#: Expected range of 20 draws from a normal distribution, in standard deviations (d2(20)).
RANGE_OF_20 = 3.735
TARGET = 0.1


def shape_covariates(graph) -> list[float]:
    """Leading input dimension, contraction widths and elementwise op counts of ``graph``."""
    widths = [n.inputs[1].shape[-1] for n in graph.nodes if n.op in ("conv2d", "matmul")]
    ops = Counter(n.op for n in graph.nodes)
    unary = ("relu", "gelu", "sigmoid", "tanh", "exp", "neg")
    return [
        graph.inputs[0].shape[0],
        statistics.fmean(widths),
        min(widths),
        max(widths),
        statistics.pstdev(widths),
        *(ops[u] for u in unary),
    ]


def program_covariates(graph) -> tuple[list[float], bool]:
    """Three shares of the unfused program: cycles off the tensor unit, such cycles in
    kernels that move DRAM bytes, and their share of the DRAM bytes; and whether its
    elementwise kernels all keep their tensors in the SRAM (no DRAM bytes)."""
    report = compile_with(graph).report
    off = [k for k in report.kernels if "tensor" not in k.units]
    dram = sum(k.dram_bytes for k in report.kernels) or 1
    elementwise = [k for k in report.kernels if _is_elementwise(k.name)]
    return [
        sum(k.end - k.start for k in off) / report.cycles,
        sum(k.end - k.start for k in off if k.dram_bytes) / report.cycles,
        sum(k.dram_bytes for k in off) / dram,
    ], not any(k.dram_bytes for k in elementwise)


def _is_elementwise(kernel: str) -> bool:
    """Whether an unfused kernel (named after its op: ``add``, ``add_1``) is elementwise
    (the program's other steps, such as loading the inputs, are not)."""
    head, _, tail = kernel.rpartition("_")
    op = head if tail.isdigit() else kernel
    return op in OPS and op_pattern(op) in (Pattern.ELEMENTWISE, Pattern.BROADCAST)


def residual_sd(y: np.ndarray, x: np.ndarray) -> float:
    """Standard deviation of ``y`` left after a least-squares fit on ``x``'s columns, per
    degree of freedom left (a fit with many columns does not look better than it is)."""
    beta, _, rank, _ = np.linalg.lstsq(x, y, rcond=None)
    return float(np.sqrt(((y - x @ beta) ** 2).sum() / max(1, len(y) - rank)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--secrets", type=int, default=20)
    args = ap.parse_args()
    clock = time.perf_counter()
    answers = middlings()
    rows: dict[str, list[dict]] = {}  # family -> one row per instance drawn
    for k in range(args.secrets):
        seeds = seeds_for(f"variance secret {k}".encode(), [PART.id], "a submission")
        part = PART.bind(seeds)
        credit = {name: {s.instance: s.fraction for s in scored(part, fns).counted_scores()}
                  for name, fns in answers.items()}  # fmt: skip
        for inst in part.hidden():
            graph = inst.build()
            program, in_sram = program_covariates(graph)
            rows.setdefault(inst.family, []).append({
                "stratum": inst.stratum,
                "shape": shape_covariates(graph),
                "program": program,
                "in_sram": in_sram,
                **{name: credit[name][inst.id] for name in answers},
            })  # fmt: skip
        print(f"secret {k}: {time.perf_counter() - clock:.0f} s", file=sys.stderr, flush=True)

    print(f"{args.secrets} secrets, {platform.node()}, {time.perf_counter() - clock:.0f} s\n")
    print("| middling | family | instances | sd of credit | within strata | + shape | + program |")
    print("|---|---|---:|---:|---:|---:|---:|")
    within: dict[str, dict[str, float]] = {}
    for name in answers:
        for family, fam_rows in rows.items():
            y = np.array([r[name] for r in fam_rows])
            strata = np.eye(max(r["stratum"] for r in fam_rows) + 1)[
                [r["stratum"] for r in fam_rows]
            ]
            shape = np.hstack([strata, np.array([r["shape"] for r in fam_rows])])
            program = np.hstack([shape, np.array([r["program"] for r in fam_rows])])
            sds = [residual_sd(y, x) for x in (strata, shape, program)]
            within.setdefault(name, {})[family] = sds[0]
            print(f"| {name} | {family} | {len(y)} | {y.std():.3f} | "
                  + " | ".join(f"{s:.3f}" for s in sds) + " |")  # fmt: skip
    print("\nInstances whose unfused elementwise kernels move no DRAM bytes (all in the SRAM):")
    for name in answers:
        for family, fam_rows in rows.items():
            kept = [r[name] for r in fam_rows if r["in_sram"]]
            rest = [r[name] for r in fam_rows if not r["in_sram"]]
            print(f"- {name}, {family}: {len(kept)} of {len(fam_rows)}"
                  + (f", mean credit {statistics.fmean(kept):.3f}" if kept else "")
                  + (f"; the others {statistics.fmean(rest):.3f}, "
                     f"sd {statistics.pstdev(rest):.3f}" if len(rest) > 1 else ""))  # fmt: skip
    counts = Counter(PART.families().values())
    ratio = {f: c / min(counts.values()) for f, c in counts.items()}
    sigma = TARGET / RANGE_OF_20 / PART.points  # a mean credit's sd for a 0.1-point range
    print(
        f"\nInstances for a 20-secret range of {TARGET} points, stratified as today, "
        f"in the part's mix ({', '.join(f'{c} {f}' for f, c in counts.items())} now):"
    )
    for name, sd in within.items():
        # points / part.points = mean over families of each family's mean credit
        var_per_unit = sum(sd[f] ** 2 / ratio[f] for f in sd) / len(sd) ** 2
        unit = math.ceil(var_per_unit / sigma**2)
        print(f"- {name}: " + ", ".join(f"{math.ceil(unit * ratio[f])} {f}" for f in sd))


if __name__ == "__main__":
    main()
