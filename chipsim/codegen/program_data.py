"""A hand-written kernel program as plain data, and back.

:class:`~chipsim.codegen.builder.KernelBuilder` records every call as a small dict (JSON:
what a test cell hands to the grader), and :func:`replay` makes the same calls again on a
fresh builder, checking every field first, so the grader rebuilds a learner's program in its
own process and never runs the learner's code. A tile is a dict of ``rows``, ``cols`` and
``inner`` -> ``[start, size]``; an SRAM operand is its byte offset.

Example:
    >>> tile_data({"k": (0, 16), 0: (0, 8), 1: (8, 8)}, row_axis=0, col_axis=1)
    {'inner': [0, 16], 'rows': [0, 8], 'cols': [8, 8]}
    >>> tile_spans({"rows": [0, 8]}, 3)
    {'rows': (0, 8), 'cols': (0, 0), 'inner': (0, 0)}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chipsim.errors import PlanError
from chipsim.hw.isa import Operand
from chipsim.i18n import listing, tr

#: The data form's fields per instruction kind (what :func:`replay` accepts).
FIELDS = {
    "load": ("value", "tile", "at"),
    "contract": ("tile", "at", "inputs", "accumulate"),
    "epilogue": ("value", "tile", "at", "inputs"),
    "store": ("value", "tile", "src"),
}


def tile_data(tile: Mapping[Any, tuple[int, int]], row_axis: int | None,
              col_axis: int | None) -> dict[str, list[int]]:  # fmt: skip
    """A tile (axis -> ``(start, size)``, ``"k"`` the inner block) as data."""
    out = {"inner": list(tile["k"])}
    if row_axis is not None:
        out["rows"] = list(tile[row_axis])
    if col_axis is not None:
        out["cols"] = list(tile[col_axis])
    return out


def tile_spans(data: Any, i: int) -> dict[str, tuple[int, int]]:
    """A tile's data checked: ``rows``, ``cols``, ``inner`` -> ``(start, size)`` (absent: all)."""
    if not isinstance(data, dict) or not set(data) <= {"rows", "cols", "inner"}:
        raise PlanError(tr("instruction #{i}: 'tile' is a dict of rows, cols, inner -> "
                           "[start, size]", i=i))  # fmt: skip
    spans = {}
    for label in ("rows", "cols", "inner"):
        span = data.get(label, [0, 0])
        if (
            not isinstance(span, (list, tuple))
            or len(span) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)
        ):
            raise PlanError(tr("instruction #{i}: tile {label} must be [start, size] (two ints)",
                               i=i, label=label))  # fmt: skip
        spans[label] = tuple(span)
    return spans


def offsets(inputs: Mapping[str, Any]) -> dict[str, int]:
    """An instruction's inputs (value name -> operand or offset) as data."""
    return {str(k): (v.offset if isinstance(v, Operand) else int(v)) for k, v in inputs.items()}


def replay(kb: Any, data: Sequence[Any]) -> Any:
    """Make the calls ``data`` records on the builder ``kb``, checking each item first;
    raises :class:`PlanError` naming the first bad instruction. Returns ``kb``."""
    if not isinstance(data, list):
        raise PlanError(tr("a program is a list of instructions (KernelBuilder.data())"))
    for i, item in enumerate(data):
        if not isinstance(item, dict) or item.get("op") not in FIELDS:
            raise PlanError(tr("instruction #{i}: each item is a dict with 'op' one of {ops}",
                               i=i, ops=listing(FIELDS)))  # fmt: skip
        op = item["op"]
        absent = [f for f in FIELDS[op] if f not in item]
        if absent:
            raise PlanError(tr("instruction #{i} ({op}) has no {fields}", i=i, op=op,
                               fields=listing(absent)))  # fmt: skip
        tile = kb.tile(**tile_spans(item["tile"], i))
        if op == "load":
            kb.load(item["value"], tile, item["at"])
        elif op == "contract":
            kb.contract(tile, item["at"], _inputs(item["inputs"], i), bool(item["accumulate"]))
        elif op == "epilogue":
            kb.epilogue(item["value"], tile, item["at"], _inputs(item["inputs"], i))
        else:
            kb.store(item["value"], tile, item["src"])
    return kb


def _inputs(data: Any, i: int) -> dict[str, int]:
    if not isinstance(data, dict):
        raise PlanError(tr("instruction #{i}: 'inputs' maps each input's name to its SRAM offset",
                           i=i))  # fmt: skip
    return dict(data)
