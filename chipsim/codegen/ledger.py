"""What SRAM and a kernel's outputs hold while its instructions are written by hand.

A :class:`~chipsim.codegen.builder.KernelBuilder` checks every instruction as it is added:
an operand must be in SRAM where the call says (:class:`SramLedger`), and a finished program
must have stored every element of every output (:class:`Stores`). Tiles are named by their
*key*: ``(axis, start, size)`` for each tiled axis of the value (:func:`tile_key`).

Example:
    >>> ledger = SramLedger({"x": "%0"})
    >>> ledger.hold(0, (0, 512), "x", (("k", 0, 16),), by=0, partial=False)
    >>> ledger.describe(0)
    'SRAM 0 holds %0[inner 0:16] (written by instruction #0)'
    >>> ledger.hold(256, (256, 768), "x", (("k", 16, 16),), by=1, partial=False)
    >>> ledger.get(0) is None, ledger.describe(0)[:40]
    (True, 'SRAM 0 held %0[inner 0:16] (written by i')
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsim.i18n import tr


def tile_key(axes: Sequence[Any], tile: Mapping[Any, tuple[int, int]]) -> tuple:
    """The key of ``tile`` on a value whose dimensions are the tiled ``axes`` (``None``: a
    dimension no tile cuts): ``(axis, start, size)`` for each tiled one."""
    return tuple((a, *tile[a]) for a in axes if a is not None)


def key_text(key: tuple) -> str:
    """A key as an error message shows it: ``[axis 0 0:8, inner 0:16]``."""
    names = {"k": "inner"}
    parts = [f"{names.get(a, f'axis {a}')} {s}:{s + n}" for a, s, n in key]
    return f"[{', '.join(parts)}]" if parts else ""


@dataclass(frozen=True, slots=True)
class Held:
    """What a range of SRAM holds: a value's tile (``key``), written by instruction ``by``."""

    value: Hashable
    key: tuple
    end: int
    by: int
    partial: bool = False  # a contraction's sum before its last inner block


class SramLedger:
    """Which tile each range of SRAM holds, and what an overwrite destroyed.

    Args:
        names: the printed name of each value (``"%2"``), for the messages.
    """

    def __init__(self, names: Mapping[Any, str]) -> None:
        self.names = names
        self.held: dict[int, Held] = {}  # SRAM start offset -> what is there
        self.lost: dict[int, tuple[Held, int]] = {}  # start -> what was there, overwritten by

    def get(self, at: int) -> Held | None:
        """What starts at SRAM byte ``at`` now (``None``: nothing, or it was overwritten)."""
        return self.held.get(at)

    def hold(
        self, at: int, span: tuple[int, int], value: Any, key: tuple, by: int, partial: bool
    ) -> None:
        """Instruction ``by`` wrote ``value``'s tile ``key`` at ``at`` (bytes ``span``):
        whatever overlapped those bytes is lost."""
        lo, hi = span
        for start in [s for s, h in self.held.items() if s < hi and lo < h.end]:
            self.lost[start] = (self.held.pop(start), by)  # overwritten, wholly or in part
        self.held[at] = Held(value, key, hi, by, partial)

    def describe(self, at: int) -> str:
        """What SRAM ``at`` holds, or why it holds nothing, in the current language."""
        held = self.held.get(at)
        if held is None and at in self.lost:
            was, by = self.lost[at]
            return tr("SRAM {at} held {tile} (written by instruction #{was}) until instruction "
                      "#{by} wrote over it (tiles in use at the same time need bytes that do "
                      "not overlap)", at=at, tile=self.names[was.value] + key_text(was.key),
                      was=was.by, by=by)  # fmt: skip
        if held is None:
            return tr("nothing has been written at SRAM {at}", at=at)
        tile = self.names[held.value] + key_text(held.key)
        if held.partial:
            return tr("SRAM {at} holds a partial sum of {tile} (written by instruction #{by})",
                      at=at, tile=tile, by=held.by)  # fmt: skip
        return tr("SRAM {at} holds {tile} (written by instruction #{by})", at=at, tile=tile,
                  by=held.by)  # fmt: skip


class Stores:
    """The tiles stored of each output, in order, each with the instruction that stored it."""

    def __init__(self) -> None:
        self.stored: dict[Any, list[tuple[tuple, int]]] = {}

    def add(self, value: Any, key: tuple, by: int) -> None:
        self.stored.setdefault(value, []).append((key, by))

    def missing(
        self, outputs: Iterable[Any], axes: Mapping[Any, Sequence[Any]], names: Mapping[Any, str]
    ) -> str:
        """Empty when every element of every output (a value with a ``shape``) was stored;
        else the first that was not, in the current language."""
        for v in outputs:
            seen = np.zeros(v.shape, dtype=bool)
            for key, _by in self.stored.get(v, []):
                seen[_slices(key, axes[v], seen.ndim)] = True
            holes = np.argwhere(~seen)
            if len(holes):
                hole = tuple(int(x) for x in holes[0])
                return tr("output {name} element {hole} is never stored: store every tile of "
                          "the output", name=names[v], hole=hole)  # fmt: skip
        return ""

    def last(self, value: Any, axes: Sequence[Any], element: Sequence[int]) -> int | None:
        """The instruction that last stored ``element`` (an index) of ``value``."""
        found = None
        for key, by in self.stored.get(value, []):
            spans = {a: (s, n) for a, s, n in key}
            inside = all(a is None or a not in spans or spans[a][0] <= i < sum(spans[a])
                         for i, a in zip(element, axes, strict=False))  # fmt: skip
            if inside:
                found = by
        return found


def _slices(key: tuple, axes: Sequence[Any], ndim: int) -> tuple[slice, ...]:
    """The index of a stored tile in its output: a slice along each tiled axis."""
    index = [slice(None)] * ndim
    spans = {a: (s, n) for a, s, n in key}
    for d, a in enumerate(axes):
        if a is not None and a in spans:
            s, n = spans[a]
            index[d] = slice(s, s + n)
    return tuple(index)
