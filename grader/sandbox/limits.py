"""The default limits of one graded notebook: the one home of the numbers.

:class:`~grader.sandbox.execute.GuardedExecute` takes them as its defaults (an instructor may
configure others), and the book's Exercises page states them; this module imports nothing, so
a downloaded chapter can read them with only chipsim installed.
"""

from __future__ import annotations

#: Seconds a cell may run before it is stopped.
CELL_SECONDS = 120
#: Wall-clock seconds for a whole notebook, restarts and replays included.
NOTEBOOK_SECONDS = 1200
#: Address space per kernel process.
MEMORY_BYTES = 4 << 30
