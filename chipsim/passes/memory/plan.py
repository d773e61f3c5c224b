"""A memory plan: one byte offset per tensor in a single arena.

A plan is only data. It is checked by :func:`~chipsim.passes.memory.validate.validate_plan`,
never trusted, so a learner (or a forged answer) can build any plan and have it validated.

Example:
    >>> from chipsim.passes.memory.liveness import UsageRecord
    >>> recs = (UsageRecord("a", 100, 0, 2), UsageRecord("b", 64, 2, 3))
    >>> plan = MemoryPlan(recs, {"a": 0, "b": 0})
    >>> plan.arena_size
    128
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chipsim import drawing
from chipsim.i18n import N_, tr
from chipsim.passes.memory.bounds import lower_bound
from chipsim.passes.memory.liveness import DEFAULT_ALIGNMENT, UsageRecord, align_up
from chipsim.text import pad, text_width

#: The plan table's column titles (English; translated where shown).
_HEADERS = (N_("id"), N_("size"), N_("first"), N_("last"), N_("offset"))


@dataclass(frozen=True, slots=True, eq=False)
class MemoryPlan:
    """Tensors (usage records) and the byte offset of each in one arena.

    Attributes:
        records: the tensors, in the order they were given to the planner.
        offsets: tensor id -> byte offset, in record order.
        alignment: every offset is a multiple of this, and every size is rounded up to it.
        strategy: name of the planner that made the plan (for tables and pictures).
    """

    records: tuple[UsageRecord, ...]
    offsets: Mapping[str, int]
    alignment: int = DEFAULT_ALIGNMENT
    strategy: str = ""
    _lb: list = field(default_factory=list, repr=False)  # cache of the lower bound

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
        object.__setattr__(self, "offsets", dict(self.offsets))

    @property
    def arena_size(self) -> int:
        """Bytes needed: the highest end of an (aligned) tensor slot; 0 for no tensors."""
        ends = (
            self.offsets[r.id] + align_up(r.size, self.alignment)
            for r in self.records
            if r.id in self.offsets
        )
        return max(ends, default=0)

    @property
    def lower_bound(self) -> int:
        """Peak live bytes of the records: no plan of them can have a smaller arena."""
        if not self._lb:
            self._lb.append(lower_bound(self.records, alignment=self.alignment))
        return self._lb[0]

    @property
    def num_steps(self) -> int:
        return max((r.last for r in self.records), default=0)

    def offset(self, tensor_id: str) -> int:
        return self.offsets[tensor_id]

    def summary(self) -> str:
        """One line: strategy, tensor count, arena, lower bound and their ratio."""
        lb = self.lower_bound
        ratio = f"{self.arena_size / lb:.3f}x" if lb else "-"
        name = f" {self.strategy}" if self.strategy else ""
        return tr(
            "MemoryPlan{name}: {tensors} tensors, arena {arena} B ({human}), "
            "lower bound {bound} B, ratio {ratio}",
            name=name,
            tensors=len(self.records),
            arena=self.arena_size,
            human=format_bytes(self.arena_size),
            bound=lb,
            ratio=ratio,
        )

    def rows(self) -> list[tuple[str, int, int, int, Any]]:
        """``(id, size, first, last, offset)`` per record, in record order."""
        return [(r.id, r.size, r.first, r.last, self.offsets.get(r.id)) for r in self.records]

    def __str__(self) -> str:
        rows = [tuple(tr(h) for h in _HEADERS)]
        rows += [tuple("-" if x is None else str(x) for x in row) for row in self.rows()]
        widths = [max(text_width(row[i]) for row in rows) for i in range(5)]
        lines = [
            "  ".join(
                pad(c, w) if i == 0 else pad(c, w, right=True)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
            for row in rows
        ]
        return "\n".join([self.summary(), *lines])

    def _repr_html_(self) -> str:
        titles = (_HEADERS[0], N_("size (B)"), *_HEADERS[2:])
        head = "".join(f"<th>{html.escape(tr(h))}</th>" for h in titles)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
            for row in self.rows()
        )
        return (
            f"<p>{html.escape(self.summary())}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )

    def draw(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the plan: time on x, address on y, one labelled rectangle per tensor."""
        return drawing.draw("memory plan", self, ax=ax, **kwargs)


def make_plan(
    records: Sequence[UsageRecord], offsets: Sequence[int], alignment: int, strategy: str
) -> MemoryPlan:
    """Build a plan from offsets given in record order (the planners' common last step)."""
    return MemoryPlan(
        tuple(records),
        {r.id: o for r, o in zip(records, offsets, strict=True)},
        alignment,
        strategy,
    )


def format_bytes(n: int) -> str:
    """``1536 -> '1.5 KiB'``: a human size for tables and axes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
