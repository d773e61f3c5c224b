"""Measured times of real hardware, each row traceable to a cited source.

A :class:`Measurement` is one workload (usually one op) timed on a real machine: what ran,
on which shapes and dtype, how long it took, how that time was obtained from the source,
and where in the source it stands. ``a100_measured.csv`` (84 published A100 rows) and
``sources.csv`` (key -> citation and URL) ship with the package; ``python -m chipsim
calibrate`` makes rows of the same kind on the learner's own CPU.

Example:
    >>> rows = load_measurements()
    >>> len(rows), rows[0].op, rows[0].shapes, rows[0].time_us
    (84, 'matmul', ((64, 12288), (12288, 12288)), 190.0)
    >>> sorted({r.source for r in rows}) == sorted(k for k in load_sources() if k == "llmcompass")
    True
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from chipsim.errors import SerializationError

DATA_DIR = Path(__file__).parent
A100_CSV = DATA_DIR / "a100_measured.csv"
A100_SOURCES_CSV = DATA_DIR / "a100_sources.csv"
SOURCES_CSV = DATA_DIR / "sources.csv"

COLUMNS = (
    "op",
    "family",
    "shape",
    "dtype",
    "call",
    "time_us",
    "published",
    "derivation",
    "timed",
    "source",
    "where",
    "set",
)
#: Columns a CSV may leave out, with the value a row then has: how the source timed it, which
#: GPU it ran on and which host profile a host-bound row was timed on (see a100_sources.csv).
OPTIONAL_COLUMNS = {"method": "call+sync", "variant": "", "host": ""}
SETS = ("fit", "heldout")
METHODS = ("kernel", "call+sync", "harness")


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured workload: ``op`` on ``shapes`` (one per input) took ``time_us``.

    ``call`` names the host path the timed call took (``cublas``, ``aten``, ``compiled``
    for the A100 rows, ``numpy`` on this machine): each path has its own per-call cost.
    ``set`` says whether a calibration may fit on the row (``"fit"``) or must only report
    it (``"heldout"``).
    """

    op: str
    family: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    time_us: float
    call: str = ""
    published: str = ""
    derivation: str = ""
    timed: str = ""
    source: str = ""
    where: str = ""
    set: str = "heldout"
    method: str = "call+sync"
    variant: str = ""  # "": the chip as given (no variant applied)
    host: str = ""

    @property
    def shape_text(self) -> str:
        """The shapes as in the CSV: ``64x12288;12288x12288``."""
        return format_shapes(self.shapes)

    @property
    def label(self) -> str:
        return f"{self.op} {self.dtype}[{self.shape_text}]"

    @property
    def elements(self) -> int:
        """Elements of the first input (the swept size of the row)."""
        return math.prod(self.shapes[0])


def parse_shapes(text: str) -> tuple[tuple[int, ...], ...]:
    """``"64x128;128x32"`` -> ``((64, 128), (128, 32))``; raises ``ValueError`` when malformed."""
    shapes = []
    for part in text.split(";"):
        dims = tuple(int(d) for d in part.strip().split("x"))
        if not dims or any(d <= 0 for d in dims):
            raise ValueError(f"dimensions must be positive integers, got {part!r}")
        shapes.append(dims)
    return tuple(shapes)


def format_shapes(shapes: Sequence[Sequence[int]]) -> str:
    return ";".join("x".join(str(d) for d in s) for s in shapes)


def _data_lines(text: str) -> Iterable[tuple[int, str]]:
    """The CSV's lines with their 1-based line numbers, comment lines (``#``) left out."""
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield lineno, line


def read_measurements(text: str, source: str = "<csv>") -> list[Measurement]:
    """Parse measurement rows (the columns of :data:`COLUMNS`; ``#`` lines are comments)."""
    lines = list(_data_lines(text))
    if not lines:
        raise SerializationError(f"{source}: no header line; expected columns {', '.join(COLUMNS)}")
    header_line, header = lines[0]
    reader = csv.DictReader(io.StringIO("\n".join(line for _, line in lines)))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise SerializationError(
            f"{source}:{header_line}: missing column(s) {', '.join(missing)}; "
            f"expected {', '.join(COLUMNS)}"
        )
    rows = []
    for (lineno, _), row in zip(lines[1:], reader, strict=False):
        where = f"{source}:{lineno}"
        try:
            shapes = parse_shapes(row["shape"])
            time_us = float(row["time_us"])
        except ValueError as exc:
            raise SerializationError(f"{where}: {exc}; fix the shape or time_us column") from None
        if not time_us > 0:
            raise SerializationError(f"{where}: time_us must be > 0, got {row['time_us']!r}")
        extra = {k: (row.get(k) or default) for k, default in OPTIONAL_COLUMNS.items()}
        if extra["method"] not in METHODS:
            raise SerializationError(
                f"{where}: method must be one of {', '.join(METHODS)}, got {extra['method']!r}"
            )
        if row["set"] not in SETS:
            raise SerializationError(
                f"{where}: set must be one of {', '.join(SETS)}, got {row['set']!r}"
            )
        rows.append(
            Measurement(
                op=row["op"],
                family=row["family"],
                shapes=shapes,
                dtype=row["dtype"],
                time_us=time_us,
                call=row["call"],
                published=row["published"],
                derivation=row["derivation"],
                timed=row["timed"],
                source=row["source"],
                where=row["where"],
                set=row["set"],
                **extra,
            )
        )
    return rows


def write_measurements(rows: Iterable[Measurement]) -> str:
    """The CSV text of ``rows`` (the inverse of :func:`read_measurements`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS + tuple(OPTIONAL_COLUMNS))
    for r in rows:
        writer.writerow(
            [
                r.op,
                r.family,
                r.shape_text,
                r.dtype,
                r.call,
                repr(r.time_us),
                r.published,
                r.derivation,
                r.timed,
                r.source,
                r.where,
                r.set,
                r.method,
                r.variant,
                r.host,
            ]
        )
    return out.getvalue()


def load_measurements(path: str | Path | None = None) -> list[Measurement]:
    """The rows of a measurement CSV (default: the published A100 set), sources checked.

    Raises:
        SerializationError: a malformed row, or a source key missing from ``sources.csv``.
    """
    path = Path(path) if path is not None else A100_CSV
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SerializationError(f"cannot read measurements {path}: {exc.strerror}") from None
    rows = read_measurements(text, str(path))
    known = load_sources()
    for r in rows:
        if r.source and r.source not in known:
            raise SerializationError(
                f"{path}: row {r.label} cites source {r.source!r}, which sources.csv does not "
                f"list; add it there (key, citation, url) or fix the key"
            )
    return rows


def load_corpus() -> list[Measurement]:
    """Every published A100 row: LLMCompass's (``a100_measured.csv``) and the five other
    sources' (``a100_sources.csv``), in that order, each row naming its source."""
    llmcompass = [  # the source models its GPU as A100_80GB (see a100_measured.csv)
        dataclasses.replace(r, variant=r.variant or "A100-SXM4-80GB") for r in load_measurements()
    ]
    return llmcompass + load_measurements(A100_SOURCES_CSV)


def load_sources(path: str | Path | None = None) -> dict[str, dict[str, str]]:
    """``sources.csv``: source key -> {citation, url, what it supplies}."""
    path = Path(path) if path is not None else SOURCES_CSV
    text = path.read_text(encoding="utf-8")
    return {row["key"]: row for row in csv.DictReader(io.StringIO(text))}


def split(rows: Iterable[Measurement], which: str) -> list[Measurement]:
    """The rows of one set (``"fit"`` or ``"heldout"``), in file order."""
    if which not in SETS:
        raise ValueError(f"unknown set {which!r}; use one of {', '.join(SETS)}")
    return [r for r in rows if r.set == which]
