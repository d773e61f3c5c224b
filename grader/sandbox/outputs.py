"""Bounds on what a learner's notebook may produce while it is graded.

A kernel can print without end, or display data nested so deep that writing the notebook
overflows Python's stack. Neither may cost a grade, nor the grader's memory or disk: each
output is checked as it arrives (:meth:`OutputBudget.admit`) and, past a cell's or the
notebook's budget, replaced by one note that says what was cut. An output's size counts
everything it writes into the notebook — its data, its MIME type names and its metadata —
and a display *update* (``update_display_data``, which rewrites every output shown under one
display id) is charged for every output it rewrites (:meth:`OutputBudget.admit_update`).
An *answer* output (the data a test cell hands to the grader) never counts against the
budget — it has its own size limit (:data:`~grader.scoring.answer.MAX_ANSWER_CHARS`) and
depth limit, checked here too, so that a learner's flood of prints cannot push their own
answer out.

Example:
    >>> budget = OutputBudget(cell_bytes=80, notebook_bytes=1000)  # 51 characters each below
    >>> budget.start_cell()
    >>> budget.admit({"output_type": "stream", "name": "stdout", "text": "x" * 8})["text"]
    'xxxxxxxx'
    >>> budget.admit({"output_type": "stream", "name": "stdout", "text": "y" * 8})["text"][:40]
    '[the grader cut the output of this cell '
"""

from __future__ import annotations

from typing import Any

from chipsim.i18n import ENGLISH, N_, tr_in
from grader.scoring.answer import MAX_ANSWER_CHARS, MIME

#: Deeper nesting than this in an output's data is cut (nbformat and json recurse on it).
MAX_DEPTH = 64


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply ``value`` (JSON-like data) nests, counted without recursion (up to limit+1)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, level + 1) for v in item)
    return deepest


def size(out: Any) -> int:
    """About how many characters ``out`` takes in the notebook file: every key and value of
    it (data, MIME type names, metadata, traceback), counted without recursion."""
    total, stack = 0, [out]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            total += 4 * len(item)
            for key, value in item.items():
                total += len(key) if isinstance(key, str) else len(repr(key))
                stack.append(value)
        elif isinstance(item, (list, tuple)):
            total += 2 * len(item)
            stack.extend(item)
        else:
            total += len(item) if isinstance(item, str) else len(repr(item))
    return total


def note(message: str, language: str = ENGLISH, /, **fields: Any) -> dict:
    """A stream output that tells the learner what the grader did: ``message`` (English,
    with ``{name}`` fields, :func:`~chipsim.i18n.tr`) in ``language``, the learner's.

    Example:
        >>> text = "the grader ignored {n} unreadable message(s) from the kernel"
        >>> note(text, "zh_CN", n=2)["text"]
        '[评分程序忽略了内核发来的 2 条无法读取的消息]\\n'
    """
    return {
        "output_type": "stream",
        "name": "stdout",
        "text": f"[{tr_in(language, message, **fields)}]\n",
    }


#: The error names of a cell the grader stopped: past its time limit, or otherwise (a dead
#: kernel, the notebook's time spent). The feedback reads them, not the note's words, which
#: are in the learner's language.
TIMED_OUT, STOPPED = "CellTimedOut", "CellStopped"


def stopped_output(text: str, ename: str = STOPPED) -> dict:
    """The error output of a cell the grader stopped, saying why (``text``). This module
    imports nothing beyond chipsim and the grader: the learner's kernel imports it too."""
    return {"output_type": "error", "ename": ename, "evalue": text,
            "traceback": [f"{ename}: {text}"]}  # fmt: skip


class OutputBudget:
    """Characters of output per cell and per notebook; see the module docstring."""

    def __init__(
        self, cell_bytes: int = 2 << 20, notebook_bytes: int = 32 << 20, language: str = ENGLISH
    ) -> None:
        self.cell_bytes, self.notebook_bytes = cell_bytes, notebook_bytes
        self.language = language  # of the notes: the learner's
        self.cell_used = self.notebook_used = 0
        self.cut = False

    def start_cell(self) -> None:
        self.cell_used, self.cut = 0, False

    def admit(self, out: Any) -> Any | None:
        """``out`` itself, a note in its place, or None (dropped: the note was already given)."""
        data = out.get("data") or {}
        if MIME in data:  # the answer: its own limits, never the budget's
            if depth(data[MIME]) > MAX_DEPTH or size(out) > MAX_ANSWER_CHARS:
                return note(
                    N_("the grader refused this answer: larger than {chars:,} characters or "
                       "nested deeper than {depth} levels; the part scores 0"),
                    self.language, chars=MAX_ANSWER_CHARS, depth=MAX_DEPTH,
                )  # fmt: skip
            return out
        if any(depth(v) > MAX_DEPTH for v in data.values()) or depth(out) > MAX_DEPTH + 4:
            return too_deep(self.language)
        n = size(out)
        if self.cell_used + n <= self.cell_bytes and self.notebook_used + n <= self.notebook_bytes:
            self.cell_used += n
            self.notebook_used += n
            return out
        if self.cut:
            return None
        self.cut = True
        if self.notebook_used + n > self.notebook_bytes:
            return note(
                N_("the grader cut the output of this notebook here: more than {limit}. Print "
                   "less (only your functions' results are graded, not what a cell prints)"),
                self.language, limit=_human(self.notebook_bytes, self.language),
            )  # fmt: skip
        return note(
            N_("the grader cut the output of this cell here: more than {limit}. Print less "
               "(only your functions' results are graded, not what a cell prints)"),
            self.language, limit=_human(self.cell_bytes, self.language),
        )  # fmt: skip

    def admit_update(self, out: Any, copies: int) -> bool:
        """May a display update rewrite ``copies`` outputs with ``out``? It is charged to the
        notebook's budget once per output it rewrites; False (the update is dropped, the
        outputs keep what they showed) past the budget."""
        if any(depth(v) > MAX_DEPTH for v in (out.get("data") or {}).values()):
            return False
        n = size(out) * max(1, copies)
        if self.notebook_used + n > self.notebook_bytes:
            return False
        self.notebook_used += n
        return True


def too_deep(language: str = ENGLISH) -> dict:
    """The note that stands for an output nested too deep to keep."""
    return note(N_("the grader removed an output nested deeper than {depth} levels"), language,
                depth=MAX_DEPTH)  # fmt: skip


def _human(n: int, language: str = ENGLISH) -> str:
    if n >= 2**20:
        return f"{n / 2**20:g} MiB"
    return tr_in(language, "{n:,} bytes", n=n)
