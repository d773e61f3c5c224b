"""The grader's checks: one answer for one instance -> an :class:`InstanceScore`.

Everything here runs in the grader's process on instances rebuilt from
:mod:`grader.problems.parts`; the answer is only data. The order of the checks for a timed
instance: right graph/records -> valid (partition or plan) -> numerically equivalent to the
reference interpreter on random inputs -> simulate -> compare with the reference and the naive
baseline.

Example:
    >>> from grader.problems.parts import get_part
    >>> part = get_part("fusion_chains")
    >>> score_instance(part, part.instance("chains_a"), {"error": "NotImplementedError"}).fraction
    0.0
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np

from chipsim.errors import ChipsimError
from chipsim.i18n import listing, tr
from grader.problems.families import compile_with
from grader.problems.part import Instance, Part
from grader.problems.parts import ALIGNMENT, OVERLAP_PARTS
from grader.scoring.answer import graph_fingerprint, records_fingerprint
from grader.scoring.credit import InstanceScore
from grader.scoring.diagnosis import slower_kernel
from grader.scoring.equivalence import first_mismatch, mismatch, random_inputs
from grader.scoring.references import Ran, baseline, built, plan_strategy, target_chip
from grader.scoring.timed import timed


# -- the checks ----------------------------------------------------------------------------
def score_instance(part: Part, inst: Instance, answer: Any) -> InstanceScore:
    """Score one instance's answer; never raises for a bad answer (it scores 0 instead).

    The answer is a learner's data, whatever its shape: a field of the wrong type is an
    invalid answer with a message naming it, never an error that stops the grader."""
    if not isinstance(answer, dict):
        return InstanceScore(inst.id, 0.0, tr("no answer for this instance"))
    if "error" in answer:
        why = tr("your function raised {error}", error=clipped(str(answer["error"])))
        return InstanceScore(inst.id, 0.0, why)
    check = _CHECKS[inst.kind]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # nothing may reach stderr in a graded cell
        try:
            return check(part, inst, answer)
        except (ChipsimError, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            why = tr("invalid answer: {error}", error=clipped(f"{type(exc).__name__}: {exc}"))
            return InstanceScore(inst.id, 0.0, why, invalid=True)


#: The longest error message an instance's line quotes (a whole traceback's worth is cut).
MESSAGE_CHARS = 800


def clipped(message: str) -> str:
    """``message``, cut at :data:`MESSAGE_CHARS` with an ellipsis that says it was cut.

    Example:
        >>> clipped("x" * 900).endswith("x…"), len(clipped("x" * 900))
        (True, 801)
    """
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + "…"


def field(answer: dict, key: str, kind: type | tuple[type, ...]) -> Any:
    """``answer[key]``, which must be of ``kind`` (a :class:`SerializationError` naming the
    field otherwise)."""
    from chipsim.errors import SerializationError

    value = answer.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _types(kind):
        names = " or ".join(t.__name__ for t in _types(kind))
        raise SerializationError(
            f'"{key}" must be {names}, not {type(value).__name__}: return what the part asks for'
        )
    return value


def _types(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _classify(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    """Exact items, scored beyond chance: a constant answer (every op "elementwise", or
    ``may_fuse`` always False) earns nothing, whatever the mix of items asked."""
    from chipsim.ir.ops import Pattern, get_op
    from chipsim.passes.fusion import can_fuse

    items = built(part.id, inst.id, inst.seed)
    patterns = field(answer, "patterns", dict)
    given = {(str(p), str(c)): v for p, c, v in field(answer, "may_fuse", list)}
    wrong = []
    truth_ops = {op: str(get_op(op).pattern) for op in items["ops"]}
    right_ops = sum(patterns.get(op) == t for op, t in truth_ops.items())
    wrong += [tr("pattern of {op}", op=op) for op, t in truth_ops.items() if patterns.get(op) != t]
    truth_pairs = {
        (p, c): _always_fuses(can_fuse, Pattern[p.upper()], Pattern[c.upper()])
        for p, c in items["pairs"]
    }
    right_pairs = sum(given.get(k) is t for k, t in truth_pairs.items())
    wrong += [
        f"may_fuse({p}, {c})" for (p, c), t in truth_pairs.items() if given.get((p, c)) is not t
    ]
    n_ops, n_pairs = len(truth_ops), len(truth_pairs)
    guess_ops, guess_pairs = (
        _constant_best(truth_ops.values()),
        _constant_best(truth_pairs.values()),
    )
    fraction = (
        n_ops * beyond_chance(right_ops, n_ops, guess_ops)
        + n_pairs * beyond_chance(right_pairs, n_pairs, guess_pairs)
    ) / max(1, n_ops + n_pairs)
    shown = listing(wrong[:6]) + (" ..." if len(wrong) > 6 else "")
    msg = tr(
        "{right} of {total} items right (patterns {right_ops} of {n_ops}, may_fuse "
        "{right_pairs} of {n_pairs}; one answer for everything would get {guess_ops} and "
        "{guess_pairs}, which earns nothing)",
        right=right_ops + right_pairs,
        total=n_ops + n_pairs,
        right_ops=right_ops,
        n_ops=n_ops,
        right_pairs=right_pairs,
        n_pairs=n_pairs,
        guess_ops=guess_ops,
        guess_pairs=guess_pairs,
    )
    if wrong:
        msg += tr("; check {items}", items=shown)
    return InstanceScore(inst.id, fraction, msg)


def _constant_best(truths: Any) -> int:
    """How many items the best constant answer gets right (the most common true answer)."""
    counts: dict[Any, int] = {}
    for t in truths:
        counts[t] = counts.get(t, 0) + 1
    return max(counts.values(), default=0)


def beyond_chance(right: int, total: int, guessed: int) -> float:
    """Credit for ``right`` of ``total`` exact items when guessing one answer gets ``guessed``.

    Linear from 0 at the guess to 1 at all right (clipped at 0); where one answer fits every
    item, only all right earns credit.

    Example:
        >>> beyond_chance(10, 10, 4), beyond_chance(4, 10, 4), beyond_chance(7, 10, 4)
        (1.0, 0.0, 0.5)
    """
    if total <= guessed:
        return 1.0 if right >= total else 0.0
    return max(0.0, (right - guessed) / (total - guessed))


#: The rounds of the fusion table that hold whatever the chip (later rounds weigh costs).
STRUCTURAL_ROUNDS = (1, 2)


def _always_fuses(can_fuse: Any, producer: Any, consumer: Any) -> bool:
    """The structural rule the exercise teaches: allowed in round 1 or 2 of the table."""
    return any(can_fuse(producer, consumer, round=r) for r in STRUCTURAL_ROUNDS)


def _fusion(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    from chipsim.passes.fusion import Partition, validate_partition

    graph = built(part.id, inst.id, inst.seed)
    if answer.get("graph") != graph_fingerprint(graph):
        return InstanceScore(inst.id, 0.0, tr("this answer is for a different graph"), invalid=True)
    partition = Partition(field(answer, "groups", list))
    validate_partition(graph, partition)
    prog = compile_with(graph, partition)
    bad = mismatch(graph, prog, lambda: baseline(part.id, inst.id, inst.seed)["shown"])
    if bad:
        return InstanceScore(inst.id, 0.0, bad, invalid=True)
    base = baseline(part.id, inst.id, inst.seed)
    score = timed(part, inst, prog.report.cycles, base, "cycles", (prog, base["shown"]))
    same = sorted(map(sorted, partition.groups)) == sorted(
        map(sorted, base["shown"].partition.groups)
    )
    score = replace(score, matches_reference=same)
    if score.fraction < 1.0:
        why = slower_kernel(prog, base["shown"])
        if why:  # two sentences, each language's full stop
            score = replace(score, message=tr("{message}. {why}", message=score.message, why=why))
    return score


def _plan_kind(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    base = baseline(part.id, inst.id, inst.seed)
    graph = built(part.id, inst.id, inst.seed)
    plan = _plan_from(answer, base["records"])
    prog = compile_with(graph, plan=plan)
    bad = mismatch(graph, prog, lambda: base["shown"])
    if bad:
        return InstanceScore(inst.id, 0.0, bad, invalid=True)
    score = timed(part, inst, prog.report.cycles, base, "cycles", (prog, base["shown"]))
    return replace(score, matches_reference=dict(plan.offsets) == dict(base["shown"].plan.offsets))


def _arena(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    records = built(part.id, inst.id, inst.seed)
    plan = _plan_from(answer, records)
    base = baseline(part.id, inst.id, inst.seed)
    score = timed(part, inst, plan.arena_size, base, "bytes", (plan, base["shown"]))
    return replace(score, matches_reference=dict(plan.offsets) == dict(base["shown"].offsets))


def _first_fit(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    records = built(part.id, inst.id, inst.seed)
    plan = _plan_from(answer, records)
    truth = plan_strategy("first_fit", records).offsets
    right = sum(plan.offsets[r.id] == truth[r.id] for r in records)
    wrong = [r.id for r in records if plan.offsets[r.id] != truth[r.id]]
    msg = tr("{right} of {total} offsets equal first fit's", right=right, total=len(records))
    if wrong:
        msg += tr("; first difference: tensor {tensor!r}", tensor=wrong[0])
    return InstanceScore(inst.id, right / len(records), msg)


def _liveness(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    from chipsim.passes.memory import liveness

    graph, order = built(part.id, inst.id, inst.seed)
    if answer.get("graph") != graph_fingerprint(graph):
        return InstanceScore(inst.id, 0.0, tr("this answer is for a different graph"), invalid=True)
    truth = {
        (r.id, r.size, r.first, r.last) for r in liveness(graph, [graph.nodes[i] for i in order])
    }
    given = [tuple(row) for row in field(answer, "records", list)]
    right = len(truth & set(given))
    total = max(len(truth), len(given))
    missing = sorted(truth - set(given))
    msg = tr("{right} of {total} records right", right=right, total=len(truth))
    if len(given) > len(truth):
        msg += tr(", {n} extra", n=len(given) - len(truth))
    if missing:
        rid, size, first, last = missing[0]
        msg += tr("; e.g. {tensor}: expected {record}", tensor=rid,
                  record=_record_text(size, first, last))  # fmt: skip
        yours = [row for row in given if str(row[0]) == rid]
        if yours:
            records = tr(" and ").join(_record_text(*row[1:4]) for row in yours[:2])
            msg += tr(", yours {records}", records=records)
        else:
            msg += tr(", yours has no record {tensor}", tensor=rid)
        msg += tr(
            " (a record is live [first, last): first is the step that makes the tensor, 0 for "
            "a graph input; last is one past the step of its last reader (of its own step if "
            "nothing reads it), and for a graph output the number of steps, {steps})",
            steps=len(order),
        )  # fmt: skip
    return InstanceScore(inst.id, right / total if total else 0.0, msg)


def _record_text(size: Any, first: Any, last: Any) -> str:
    return tr("{size} B live [{first}, {last})", size=size, first=first, last=last)


def _units(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    """Each item's unit (beyond a constant guess) and its cycles (exact, from the chip's
    costs); half the credit each."""
    from chipsim.codegen.units import unit_and_cycles

    items = built(part.id, inst.id, inst.seed)["items"]
    given = field(answer, "units", list)
    chip = target_chip()
    truth = [unit_and_cycles(i["op"], i["dtype"], i["shapes"], chip) for i in items]
    if len(given) != len(items):
        raise ValueError(f"{len(given)} answers for {len(items)} items")
    right_units = right_cycles = 0
    wrong = []
    for item, (unit, cycles), mine in zip(items, truth, given, strict=True):
        ok_unit = isinstance(mine, list) and len(mine) == 2 and mine[0] == unit
        ok_cycles = isinstance(mine, list) and len(mine) == 2 and mine[1] == cycles
        right_units += ok_unit
        right_cycles += ok_cycles
        if not (ok_unit and ok_cycles) and len(wrong) < 3:
            yours = tr("yours {answer}", answer=mine)
            wrong.append(f"{item['op']} {item['dtype']} {item['shapes']}: {unit}, {cycles:,} "
                         f"({yours})")  # fmt: skip
    n = len(items)
    guess = _constant_best(u for u, _ in truth)
    fraction = 0.5 * beyond_chance(right_units, n, guess) + 0.5 * right_cycles / n
    msg = tr(
        "units {right_units} of {n} right (one unit for everything gets {guess}, which earns "
        "nothing), cycles {right_cycles} of {n} right",
        right_units=right_units, n=n, guess=guess, right_cycles=right_cycles,
    )  # fmt: skip
    if wrong:
        msg += tr("; expected {items}", items="; ".join(wrong))
    return InstanceScore(inst.id, fraction, msg)


def _program(part: Part, inst: Instance, answer: dict) -> InstanceScore:
    """Rebuild the learner's instructions (:func:`~chipsim.codegen.builder.assemble` checks
    each), check every output is stored and the values match the reference interpreter, then
    score the cycles (and, for a double-buffering part, the DMA overlap)."""
    from chipsim.codegen.builder import assemble
    from chipsim.ir import interpret
    from chipsim.runtime.handwritten import run_kernel

    graph = built(part.id, inst.id, inst.seed)
    if answer.get("graph") != graph_fingerprint(graph):
        return InstanceScore(inst.id, 0.0, tr("this answer is for a different graph"), invalid=True)
    kb = assemble(graph, target_chip(), field(answer, "program", list))
    hole = kb.missing()
    if hole:
        return InstanceScore(inst.id, 0.0, hole, invalid=True)
    args = random_inputs(graph)
    got, report = run_kernel(kb, *args)
    wrong = first_mismatch(interpret(graph, *args), got)
    if wrong is not None:
        k, element = wrong
        name = kb.outputs[k]
        why = tr(
            "output {name} differs from the reference interpreter on random inputs, first at "
            "element {element}, stored by instruction #{index}: check the tile that "
            "instruction stores (every inner block summed, accumulate=True after the first; "
            "the epilogue ops in order, on the finished sum)",
            name=name, element=element, index=kb.stored_by(name, element),
        )  # fmt: skip
        return InstanceScore(inst.id, 0.0, why, invalid=True)
    mine = Ran(kb, report)
    base = baseline(part.id, inst.id, inst.seed)
    score = timed(part, inst, mine.cycles, base, "cycles", (mine, base["shown"]))
    if part.id in OVERLAP_PARTS:
        # as fast as the reference: the overlap did its job, whatever its exact share
        ref_overlap = base["overlap"]
        full = score.fraction >= 1.0 or ref_overlap <= 0
        share = 1.0 if full else min(1.0, mine.overlap / ref_overlap)
        fraction = 0.5 * score.fraction + 0.5 * share
        msg = tr("{timed}; DMA overlapped with compute {mine:.0%} of its time, the "
                 "reference {ref:.0%}", timed=score.message, mine=mine.overlap,
                 ref=base["overlap"])  # fmt: skip
        score = replace(score, fraction=fraction, message=msg)
    return score


_CHECKS = {
    "units": _units,
    "program": _program,
    "classify": _classify,
    "fusion": _fusion,
    "plan": _plan_kind,
    "arena": _arena,
    "first_fit": _first_fit,
    "liveness": _liveness,
}


# -- helpers -------------------------------------------------------------------------------
def _plan_from(answer: dict, records: list) -> Any:
    """A validated MemoryPlan from an answer's offsets for exactly ``records``."""
    from chipsim.errors import PlanError
    from chipsim.passes.memory import MemoryPlan, validate_plan

    if answer.get("records") != records_fingerprint(records):
        raise PlanError("this plan is for different tensors than the instance's records")
    offsets = answer.get("offsets")
    if not isinstance(offsets, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in offsets.values()
    ):
        raise PlanError('"offsets" must map each tensor id to an int')
    return validate_plan(MemoryPlan(tuple(records), offsets, ALIGNMENT, "yours"))
