"""A measured result (cycles, or arena bytes) against the reference and the naive baseline:
its credit on the part's line (:func:`~grader.scoring.credit.credit`) and the sentence that
tells a learner where it lies.

Example:
    >>> from grader.problems.parts import PARTS
    >>> part = PARTS["memory_challenge"]
    >>> score = timed(part, part.instance("tight_40"), 1280, {"reference": 1000, "naive": 1500},
    ...               "bytes", None)
    >>> score.fraction, score.message.split(": ", 1)[1]
    (0.5, '50.0% of the way from naive to the full-credit line (at most 1,060)')
"""

from __future__ import annotations

import math

from chipsim.i18n import tr
from grader.problems.part import Instance, Part
from grader.problems.parts import strategy_title
from grader.scoring.credit import (
    BASELINE_CREDIT,
    InstanceScore,
    credit,
    segment,
    separates,
    shown_fraction,
)


def timed(
    part: Part, inst: Instance, theirs: int, base: dict, unit: str, shown: tuple
) -> InstanceScore:
    """``theirs`` (``unit``: "cycles" or "bytes") on ``inst`` against ``base``'s reference,
    naive baseline and (where the part has one) simple baseline and lower bound: its credit
    on the part's line, the numbers, and a sentence that says where it lies on the line."""
    ref, naive, simple = base["reference"], base["naive"], base.get("baseline")
    frac = credit(theirs, ref, naive, baseline=simple, slack=part.slack)
    numbers = {"theirs": int(theirs), "reference": int(ref), "naive": int(naive)}
    if "lower_bound" in base:
        numbers["lower_bound"] = int(base["lower_bound"])
    if simple is not None:
        numbers["baseline"] = int(simple)
    unit = tr("cycles") if unit == "cycles" else tr("bytes")
    baseline_name = tr(strategy_title(part.baseline))
    if frac >= 1.0 and not separates(ref, naive, slack=part.slack):
        how = tr(
            "at or below the reference: full credit ({theirs:,} <= {ref:,} {unit}; here the "
            "reference is no faster than naive, so there is nothing to earn beyond it)",
            theirs=theirs,
            ref=ref,
            unit=unit,
        )
    elif frac >= 1.0:
        how = tr(
            "at or below the reference: full credit ({theirs:,} <= {ref:,} {unit})",
            theirs=theirs,
            ref=ref,
            unit=unit,
        ) if theirs <= ref else tr(
            "within {slack:.0%} of the reference: full credit", slack=part.slack
        )  # fmt: skip
    elif frac <= 0.0:
        how = tr(
            "no better than the naive baseline ({theirs:,} >= {naive:,} {unit})",
            theirs=theirs,
            naive=naive,
            unit=unit,
        )
    else:
        how = _between(part, frac, theirs, ref, naive, simple, baseline_name)
    extra = ""
    if simple is not None:  # what the baseline itself earns here (all of it within the slack)
        share = credit(simple, ref, naive, baseline=simple, slack=part.slack)
        extra += tr(", {name} {value:,} (earns {share:.0%})", name=baseline_name, value=simple,
                    share=share)  # fmt: skip
    if "lower_bound" in numbers:
        extra += tr(", lower bound {bound:,}", bound=numbers["lower_bound"])
    msg = tr(
        "yours {theirs:,} {unit}, reference {ref:,}, naive {naive:,}{named}{lb}: {how}",
        theirs=theirs,
        unit=unit,
        ref=ref,
        naive=naive,
        named=tr(" ({name})", name=tr(strategy_title(part.naive))) if part.naive else "",
        lb=extra,
        how=how,
    )
    if not math.isfinite(frac):
        frac = 0.0
    return InstanceScore(inst.id, frac, msg, numbers, shown)


def _between(
    part: Part, frac: float, theirs: int, ref: int, naive: int, simple: int | None, name: str
) -> str:
    """Where ``theirs`` lies on the part's credit line, in words (the line's two ends, the
    baseline called ``name``; the line bends at the baseline exactly when
    :func:`~grader.scoring.credit.credit` bends it)."""
    last = math.floor(ref * (1 + part.slack))  # the largest result with full credit
    piece = segment(theirs, ref, naive, baseline=simple, slack=part.slack)
    if piece in ("lower", "upper") and theirs == simple:
        return tr("the same as {name}: {half:.0%} credit", name=name,
                  half=BASELINE_CREDIT)  # fmt: skip
    if piece == "lower":
        return tr("between naive (0%) and {name} ({half:.0%}) on the line",
                  name=name, half=BASELINE_CREDIT)  # fmt: skip
    if piece == "upper" and part.slack:
        return tr("between {name} ({half:.0%}) and the full-credit line (at most {full:,})",
                  name=name, half=BASELINE_CREDIT, full=last)  # fmt: skip
    if piece == "upper":
        return tr("between {name} ({half:.0%}) and the reference ({full:,})",
                  name=name, half=BASELINE_CREDIT, full=ref)  # fmt: skip
    if part.slack:
        return tr("{fraction:.1%} of the way from naive to the full-credit line (at most "
                  "{full:,})", fraction=shown_fraction(frac), full=last)  # fmt: skip
    return tr("{fraction:.1%} of the way from naive to the reference",
              fraction=shown_fraction(frac))  # fmt: skip
