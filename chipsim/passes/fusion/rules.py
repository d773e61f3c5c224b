"""The fusion rules, as one short table over the pattern lattice.

Every op has a :class:`~chipsim.ir.ops.Pattern` (ELEMENTWISE < BROADCAST < INJECTIVE <
REDUCTION < CONTRACTION < OPAQUE). A *group's* pattern is the largest of its members'. The
reference pass grows groups from the outputs backwards: a producer group may join the group
of its consumers when the table below says so (and the post-dominator and SRAM rules agree, see
:mod:`chipsim.passes.fusion.reference`).

Reading the table row by row (in the spirit of TVM's FuseOps):

* cheap per-element ops (elementwise, broadcast, injective) fuse into chains of the same kind,
  and into a reduction that reads them (*input fusion*: ``sum(exp(x))`` never writes ``exp(x)``);
* a reduction takes an elementwise/broadcast/injective *epilogue* (``mean(x) * 0.5``,
  a reshape of the result);
* a contraction (matmul, conv2d) takes an elementwise/broadcast epilogue (bias add,
  activation);
* nothing fuses into or out of an opaque op.

* cells marked 3 (``COST``) are fusions that pay on some chips and sizes but not others: a
  cheap op feeding a contraction (a *prologue*: ``relu`` or a transpose on the way into a
  matmul), a reduction feeding another reduction or a contraction, a contraction feeding a
  transpose, a row-wise reduction or **another contraction** (NPU "layer fusion" or
  cascading: ``(x @ W1) @ W2`` in one kernel keeps the intermediate in SRAM, which pays
  only when both weights and the row tiles fit on chip). The pass makes them only in its
  cost-aware last step (:mod:`chipsim.passes.fusion.search`), and only when its estimate of
  the chip says the merged kernel is faster.

Each allowed fusion is tagged with the *round* in which the reference pass makes it. Round 1
builds chains of cheap ops and contraction epilogues; round 2 then fuses around reductions
(input fusion, and an elementwise or injective epilogue after a reduction); round 3 is the
cost-aware step.
The order matters: in ``relu(conv(x) + b)`` followed by ``mean``, round 1 gives the conv its
``add, relu`` epilogue before round 2 could hand those ops to the ``mean`` instead.

Example:
    >>> from chipsim.ir import Pattern
    >>> can_fuse(Pattern.CONTRACTION, Pattern.BROADCAST)   # matmul -> bias add
    True
    >>> can_fuse(Pattern.CONTRACTION, Pattern.CONTRACTION, round=1)  # matmul -> matmul
    False
    >>> can_fuse(Pattern.CONTRACTION, Pattern.CONTRACTION, round=COST)  # if it pays
    True
"""

from __future__ import annotations

from collections.abc import Iterable

from chipsim.ir.ops import Pattern, get_op

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("fusion",)

E, B, I, R, C, O = (
    Pattern.ELEMENTWISE,
    Pattern.BROADCAST,
    Pattern.INJECTIVE,
    Pattern.REDUCTION,
    Pattern.CONTRACTION,
    Pattern.OPAQUE,
)

NEVER = 0
COST = 3  # allowed only in the cost-aware step, when the estimate says the merge is faster
#: producer pattern -> round in which it may join a consumer group of each pattern (0: never).
FUSION_TABLE: dict[Pattern, tuple[int, ...]] = {
    #   consumer group:  E  B  I  R  C  O
    E: (1, 1, 1, 2, 3, 0),  # chains of cheap ops; input fusion into a reduction
    B: (1, 1, 1, 2, 3, 0),  # a broadcast is an elementwise op with repeated reads
    I: (1, 1, 1, 2, 3, 0),  # reshape/transpose/slice only move indices around
    R: (2, 2, 2, 3, 3, 0),  # a reduction takes an elementwise/injective epilogue
    C: (1, 1, 3, 3, 3, 0),  # matmul/conv take a bias-add/activation epilogue
    O: (0, 0, 0, 0, 0, 0),  # opaque: never fused
}
ROUNDS = (1, 2)  # the rule-only rounds; COST entries are used by the cost-aware step only


def fusion_round(producer: Pattern, consumer_group: Pattern) -> int:
    """The round in which a ``producer`` group may join a ``consumer_group`` (0: never)."""
    return FUSION_TABLE[producer][int(consumer_group)]


def can_fuse(producer: Pattern, consumer_group: Pattern, round: int | None = None) -> bool:
    """Whether a group of pattern ``producer`` may join one of pattern ``consumer_group``.

    With ``round``, only fusions the table allows in that round count.
    """
    allowed = fusion_round(producer, consumer_group)
    return allowed != NEVER and (round is None or allowed == round)


def op_pattern(op: str) -> Pattern:
    """The pattern of an op name, from the op registry."""
    return get_op(op).pattern


def group_pattern(ops: Iterable[str]) -> Pattern:
    """The pattern of a group: the largest pattern of its ops (the lattice's join)."""
    return max((op_pattern(op) for op in ops), default=Pattern.ELEMENTWISE)


def format_rules() -> str:
    """The table as text: one row per producer pattern; per consumer, the round or ``-``.

    Example:
        >>> print(format_rules().splitlines()[0])
        producer \\ consumer  elementwise broadcast injective reduction contraction opaque
    """
    cols = list(Pattern)
    lines = ["producer \\ consumer  " + " ".join(str(c) for c in cols)]
    for p in cols:
        cells = [
            (str(fusion_round(p, c)) if can_fuse(p, c) else "-").ljust(len(str(c))) for c in cols
        ]
        lines.append(f"{str(p):<20} " + " ".join(cells).rstrip())
    return "\n".join(lines)
