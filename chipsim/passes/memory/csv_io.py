"""Buffers and plans as CSV: ``id,lower,upper,size`` in, the same plus ``offset`` out.

Lifetimes are half-open ``[lower, upper)``, the one convention of
:mod:`chipsim.passes.memory.liveness` (``lower = first``, ``upper = last``): a buffer with
``upper = 5`` and one with ``lower = 5`` are never live together and may share bytes.

Reading is liberal, as files saved by spreadsheets need: a UTF-8 byte-order mark (or UTF-16
with one), Windows (CRLF) or old Mac (CR) line ends, ``;`` or tab instead of ``,``, spaces
around fields, any letter case and extra columns in the header, blank lines. Everything else
is an error that names the line and says what to change.

Example:
    >>> recs = read_records_csv("\\ufeffID ; Lower ; Upper ; Size\\r\\na ; 0 ; 2 ; 100\\r\\n")
    >>> [str(r) for r in recs]
    ['a: 100 B live [0, 2)']
"""

from __future__ import annotations

import csv
import io
import re

from chipsim.errors import PlanError, SerializationError
from chipsim.passes.memory.liveness import UsageRecord
from chipsim.passes.memory.plan import MemoryPlan

COLUMNS = ("id", "lower", "upper", "size")

#: Field separators accepted on reading, in order of preference.
DELIMITERS = (",", ";", "\t")


def decode_csv_bytes(data: bytes, source: str = "<csv>") -> str:
    """Text of a CSV file: UTF-8 (with or without a byte-order mark) or UTF-16 with one.

    Raises:
        SerializationError: the bytes are neither; names the line of the first bad byte.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as err:
            raise SerializationError(f"{source}: not valid UTF-16 text ({err.reason})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise SerializationError(
            f"{source}, line {line}: byte 0x{data[err.start]:02x} is not UTF-8 text; "
            "save the file as 'CSV UTF-8' (or UTF-16) and try again"
        ) from None


def read_records_csv(text: str, source: str = "<csv>") -> list[UsageRecord]:
    """Parse CSV text into usage records (see the module docstring for what is accepted).

    Raises:
        SerializationError: naming ``source`` and the line: no header, a missing column, a
            row with too few fields, an empty or duplicate id, a value that is not a whole
            number, ``upper <= lower``, or a negative size or lower.
    """
    lines = text.removeprefix("\ufeff").splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip()), None)
    if start is None:
        raise SerializationError(
            f"{source}: the file is empty; expected a header {','.join(COLUMNS)}"
        )
    delimiter, col = _header(lines[start], start + 1, source)
    records, seen = [], {}
    for number, row in enumerate(csv.reader(lines[start + 1 :], delimiter=delimiter), start + 2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) <= max(col.values()):
            raise SerializationError(
                f"{source}, line {number}: expected {max(col.values()) + 1} fields "
                f"({delimiter!r}-separated), got {len(row)}: {lines[number - 1].strip()!r}"
            )
        name = row[col["id"]].strip()
        if not name:
            raise SerializationError(f"{source}, line {number}: the id is empty")
        if name in seen:
            raise SerializationError(
                f"{source}, line {number}: duplicate id {name!r} (first on line {seen[name]}); "
                "every buffer needs its own id"
            )
        seen[name] = number
        lower, upper, size = (
            _whole_number(row[col[c]], c, name, number, source) for c in ("lower", "upper", "size")
        )
        if upper <= lower:
            raise SerializationError(
                f"{source}, line {number}: buffer {name!r} has upper {upper} <= lower {lower}; "
                "lifetimes are half-open [lower, upper), so upper must be greater"
            )
        try:
            records.append(UsageRecord(name, size, lower, upper))
        except PlanError as err:
            raise SerializationError(f"{source}, line {number}: {err}") from None
    return records


def _header(line: str, number: int, source: str) -> tuple[str, dict[str, int]]:
    """The delimiter and the column positions, from the header line."""
    for delimiter in DELIMITERS:
        names = [h.strip().lower() for h in next(csv.reader([line], delimiter=delimiter))]
        if all(c in names for c in COLUMNS):
            return delimiter, {c: names.index(c) for c in COLUMNS}
    names = [h.strip().lower() for h in re.split(r"[,;\t]", line)]
    missing = [c for c in COLUMNS if c not in names]
    raise SerializationError(
        f"{source}, line {number}: missing column(s) {', '.join(missing)} in the header "
        f"{line.strip()!r}; the header must name the columns {','.join(COLUMNS)} "
        "(separated by ',', ';' or tabs; in any order, other columns are ignored)"
    )


def _whole_number(raw: str, column: str, name: str, number: int, source: str) -> int:
    text = raw.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    hint = "a whole number"
    if re.fullmatch(r"[+-]?\d{1,3}([ ,.'_]\d{3})+", text):
        hint += " without thousands separators"
    elif re.fullmatch(r"[+-]?\d*[.,]\d+", text):
        hint += f" ({'bytes' if column == 'size' else 'steps'} do not come in fractions)"
    raise SerializationError(
        f"{source}, line {number}: {column} of {name!r} must be {hint}, got {raw.strip()!r}"
    )


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
