"""Buffers and plans as CSV: ``id,lower,upper,size`` in, the same plus ``offset`` out.

Lifetimes are half-open ``[lower, upper)``, the one convention of
:mod:`chipsim.passes.memory.liveness` (``lower = first``, ``upper = last``).

Example:
    >>> recs = read_records_csv("id,lower,upper,size\\na,0,2,100\\nb,1,3,64\\n")
    >>> [str(r) for r in recs]
    ['a: 100 B live [0, 2)', 'b: 64 B live [1, 3)']
"""

from __future__ import annotations

import csv
import io

from chipsim.errors import PlanError, SerializationError
from chipsim.passes.memory.liveness import UsageRecord
from chipsim.passes.memory.plan import MemoryPlan

COLUMNS = ("id", "lower", "upper", "size")


def read_records_csv(text: str, source: str = "<csv>") -> list[UsageRecord]:
    """Parse CSV text into usage records.

    Raises:
        SerializationError: naming ``source`` and the line: a missing column, a non-integer,
            ``upper <= lower``, a negative size or lower, or a duplicate id.
    """
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise SerializationError(
            f"{source}: the file is empty; expected a header {','.join(COLUMNS)}"
        )
    header = [h.strip().lower() for h in header]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SerializationError(
            f"{source}, line 1: missing column(s) {', '.join(missing)}; "
            f"the header must contain {','.join(COLUMNS)}"
        )
    col = {c: header.index(c) for c in COLUMNS}
    records, seen = [], {}
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise SerializationError(
                f"{source}, line {line}: expected {len(header)} fields, got {len(row)}"
            )
        name = row[col["id"]].strip()
        if not name:
            raise SerializationError(f"{source}, line {line}: the id is empty")
        if name in seen:
            raise SerializationError(
                f"{source}, line {line}: duplicate id {name!r} (first on line {seen[name]})"
            )
        seen[name] = line
        values = {}
        for c in ("lower", "upper", "size"):
            raw = row[col[c]].strip()
            try:
                values[c] = int(raw)
            except ValueError:
                raise SerializationError(
                    f"{source}, line {line}: {c} of {name!r} must be an integer, got {raw!r}"
                ) from None
        lower, upper, size = values["lower"], values["upper"], values["size"]
        if upper <= lower:
            raise SerializationError(
                f"{source}, line {line}: buffer {name!r} has upper {upper} <= lower {lower}; "
                f"lifetimes are half-open [lower, upper), so upper must be greater"
            )
        try:
            records.append(UsageRecord(name, size, lower, upper))
        except PlanError as err:
            raise SerializationError(f"{source}, line {line}: {err}") from None
    return records


def write_plan_csv(plan: MemoryPlan) -> str:
    """The plan as CSV text: ``id,lower,upper,size,offset``, one row per record."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*COLUMNS, "offset"))
    for r in plan.records:
        writer.writerow((r.id, r.first, r.last, r.size, plan.offsets[r.id]))
    return out.getvalue()


def write_records_csv(records: list[UsageRecord]) -> str:
    """Records as CSV text with the columns ``id,lower,upper,size``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in records:
        writer.writerow((r.id, r.first, r.last, r.size))
    return out.getvalue()
