"""Digests of chipsim's behaviour: a refactor that changes none of them changed no behaviour.

Prints one sha256 per item and one over all of them:

* **models** — the four published models (``chipsim.models``: ResNet-18, MobileNetV2,
  BERT-base, GPT-2 small, shrunk to the sizes below so the whole run takes about a minute)
  compiled on every preset as :func:`chipsim.models.measure` compiles them (batch norm folded,
  then ``chipsim.compile``): the simulated cycles, the partition, the memory plan (offsets and
  arena), the placement, every instruction, the per-kernel cycle list; and the same graph run
  eagerly (one kernel per op, timing only): its cycles, per-kernel cycles and DRAM peak;
* **rules**, **estimated** — the rule pass alone on each model, and the rules and the
  autotuner on the fusion cost model's estimates for a stand-in with each preset's fields;
* **blocks** — the teaching graphs (``chipsim.workloads.blocks``) compiled on every preset;
* **grades** — the grader's points (:mod:`grader.scoring.spread`, in this process) of the
  course's model solution and of a middling one (``benchmarks/grading_spread.py``) on every
  part, over 3 fixed course secrets.

    .venv/bin/python benchmarks/digests.py [--skip-grades] [--verbose]

Cycles are integers and every pass is deterministic, so the digests are identical on every
machine and run; ``benchmarks/README.md`` records them before and after each refactor.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

import chipsim as cs
import chipsim.models as models
from chipsim.models.measure import BIG_DRAM, with_dram
from chipsim.passes.fold_batchnorm import fold_batchnorm
from chipsim.passes.fusion import autotune, rule_fusion
from chipsim.workloads import blocks
from chipsim.workloads.eager import run_eager

#: model -> knobs: the published architectures, shrunk (fewer pixels, tokens and layers)
SIZES: dict[str, dict[str, Any]] = {
    "resnet18": {"image": 64},
    "mobilenet_v2": {"image": 64},
    "bert_base": {"seq": 32, "layers": 2},
    "gpt2_small": {"seq": 32, "layers": 2},
}


def sha(lines: Iterable[str]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode())
        h.update(b"\n")
    return h.hexdigest()


def instruction(ins: Any) -> str:
    """An instruction as text, its semantics as whether it has any (not a memory address)."""
    fields = dataclasses.asdict(ins)
    fields["fn"] = ins.fn is not None
    return repr(fields)


def program_lines(program: Any) -> list[str]:
    """Everything a compiled program decided, as text."""
    report = program.report
    names = program.graph.names()
    lines = [f"cycles {report.cycles}", f"partition {[list(g) for g in program.partition.groups]}"]
    plan = program.plan
    lines.append(f"plan arena={plan.arena_size} {sorted(plan.offsets.items())}")
    placement = program.placement
    lines.append(
        f"placement arena={placement.arena_bytes}@{placement.arena_level} "
        f"dram={placement.dram_bytes} cached={placement.cached}"
    )
    lines += [
        f"  {names[v]} {slot.level} {slot.offset}"
        for v, slot in sorted(placement.slots.items(), key=lambda kv: int(names[kv[0]][1:]))
    ]
    lines += [f"  input {names[v]} {a}" for v, a in placement.host_inputs.items()]
    lines += [f"kernel {k.name} {k.cycles} {k.start} {k.end}" for k in report.kernels]
    lines += [instruction(i) for i in program.instructions]
    return lines


def estimated(graph: Any, chip: Any) -> Any:
    """The reference fusion's rules and autotuner on the cost model's estimates."""
    return autotune(graph, chip, rule_fusion(graph, chip))


def fields(chip_name: str) -> SimpleNamespace:
    """A stand-in with a chip's fields but not a :class:`~chipsim.hw.Chip`."""
    chip = cs.chip(chip_name)
    keep = ("name", "launch", "dram", "sram", "simd", "tensor_core", "tensor_flops_per_cycle")
    return SimpleNamespace(**{k: getattr(chip, k) for k in keep})


def model_items() -> Iterable[tuple[str, list[str]]]:
    for name, knobs in SIZES.items():
        graph = models.build(name, **knobs)
        inference = fold_batchnorm(graph)
        yield f"rules {name}", [str(rule_fusion(inference))]
        for chip_name in cs.chips():  # a chip the fusion only reads fields of: its estimates
            yield (
                f"estimated {name} {chip_name}",
                [str(estimated(inference, fields(chip_name)))],
            )
        for chip_name in cs.chips():
            chip = cs.chip(chip_name)
            weights = sum(n.type.nbytes for n in inference.nodes if n.op == "constant")
            if weights > chip.dram.capacity_bytes // 2:
                chip = with_dram(chip, BIG_DRAM)
            program = cs.compile(inference, chip=chip)
            yield f"compiled {name} {chip_name}", program_lines(program)
            zeros = [np.zeros(v.shape, v.dtype.numpy) for v in graph.inputs]
            run = run_eager(graph, *zeros, chip=chip, functional=False)
            rep = run.report
            lines = [f"eager cycles {rep.cycles} peak {run.device.allocator.peak_reserved}"]
            lines += [f"kernel {k.name} {k.cycles}" for k in rep.kernels]
            yield f"eager {name} {chip_name}", lines


def block_items() -> Iterable[tuple[str, list[str]]]:
    graphs = {
        "chain": blocks.chain_graph(0),
        "epilogue": blocks.epilogue_graph(1, 64, 64, 128),
        "transformer": blocks.transformer_graph(2, extra=0.5),
        "cnn": blocks.cnn_graph(3),
    }
    for name, graph in graphs.items():
        for chip_name in cs.chips():
            yield f"block {name} {chip_name}", program_lines(cs.compile(graph, chip=chip_name))


def grade_items(secrets: int) -> Iterable[tuple[str, list[str]]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from grading_spread import middling_functions

    from grader.problems.parts import PARTS
    from grader.scoring.spread import model_functions, spread

    solutions = {"model": model_functions(), "middling": middling_functions()}
    for row in spread(list(PARTS), solutions, secrets):
        yield f"grade {row.part} {row.solution}", [repr(s) for s in row.scores]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-grades", action="store_true")
    ap.add_argument("--secrets", type=int, default=3)
    ap.add_argument("--verbose", action="store_true", help="print every item's lines")
    args = ap.parse_args()
    items = [*model_items(), *block_items()]
    if not args.skip_grades:
        items += grade_items(args.secrets)
    for key, lines in items:
        print(f"{sha(lines)[:16]}  {key}")
        if args.verbose or key.startswith("grade"):
            for line in lines[:8] if not args.verbose else lines:
                print(f"      {line}")
    print(f"{sha(sha(lines) for _, lines in items)}  all ({len(items)} items)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
