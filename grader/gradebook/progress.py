"""What a grading run shows while it works, and the summary it ends with.

The bar (on stderr, redrawn in place; one line per 10 % when stderr is not a terminal, so a
Kubernetes log stays readable)::

    shard 1/4 [######----] 12/40 graded, 1 failed | 0.80 notebooks/s | ~35 s left | ada/fusion

Rates and times are wall-clock, for the person watching; they never enter a grade.

Example:
    >>> s = Summary(graded=38, skipped=2, elsewhere=1, failed=1, seconds=50.0)
    >>> print(s.line("shard 1/4"))  # doctest: +NORMALIZE_WHITESPACE
    shard 1/4: 38 graded, 2 skipped (unchanged since last graded),
    1 graded by another process, 1 NOT graded, in 50 s (0.76 notebooks/s)
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass

#: Notebooks graded before the bar estimates the time left. The heaviest notebooks start
#: first and the lighter ones finish beside them, so a rate from the first one or two says
#: far too little (a learner's three notebooks: "~31 s left" in a run of 121 s).
ESTIMATE_AFTER = 3


class Progress:
    """A progress bar with counts (graded, failed) and the rate, for ``total`` jobs."""

    def __init__(
        self, total: int, *, enabled: bool = True, width: int = 20, label: str = "", stream=None
    ) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.width, self.enabled, self.label = width, enabled, label
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.lock = threading.Lock()  # the pool's threads step it
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._tenth = -1

    def step(self, label: str, ok: bool = True) -> None:
        with self.lock:
            self.done = min(self.total, self.done + 1)
            self.failed += 0 if ok else 1
            if self.enabled:
                self._draw(label)

    def rate(self) -> float:
        """Notebooks per second so far."""
        return self.done / max(1e-9, time.monotonic() - self.start)

    def text(self, label: str = "") -> str:
        filled = self.width * self.done // max(1, self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        rate = self.rate()
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        estimate = self.done >= min(ESTIMATE_AFTER, self.total)
        left_text = f"~{left:.0f} s left" if estimate else "time left: estimating"
        failed = f", {self.failed} failed" if self.failed else ""
        head = f"{self.label} " if self.label else ""
        return (
            f"{head}[{bar}] {self.done}/{self.total} graded{failed} | "
            f"{rate:.2f} notebooks/s | {left_text} | {label[:30]}"
        )

    def _draw(self, label: str) -> None:
        if self.tty:
            self.stream.write("\r" + self.text(label).ljust(110))
        else:
            tenth = 10 * self.done // max(1, self.total)
            if tenth == self._tenth:
                return
            self._tenth = tenth
            self.stream.write(self.text(label) + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


@dataclass(frozen=True, slots=True)
class Summary:
    """How a run ended: graded, skipped as unchanged, left to another process, not graded."""

    graded: int
    skipped: int
    elsewhere: int
    failed: int
    seconds: float

    def line(self, label: str = "this run") -> str:
        rate = self.graded / self.seconds if self.seconds > 0 else 0.0
        return (
            f"{label}: {self.graded} graded, {self.skipped} skipped (unchanged since last "
            f"graded), {self.elsewhere} graded by another process, {self.failed} NOT graded, "
            f"in {self.seconds:.0f} s ({rate:.2f} notebooks/s)"
        )
