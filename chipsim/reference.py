"""Which of chipsim's functions are the course's reference solutions.

The course's exercises ask learners to write some of what chipsim already has: the fusion
rule, the reference fusion, the planners, liveness. Those functions say so where they are
defined — ``@reference_for("fusion")`` on a function or method, or a module-level
``__reference_for__ = ("memory_planning",)`` when every function of the module is one — so
that nobody has to keep a list of them elsewhere. chipsim itself does nothing with the mark;
the course's grader reads it (from the source, without importing) and withholds those
functions from a learner's code while it is checked and graded.

Example:
    >>> @reference_for("fusion")
    ... def my_rule(a, b):
    ...     return a == b
    >>> my_rule.__reference_for__, my_rule(1, 1)
    (frozenset({'fusion'}), True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def reference_for(*exercises: str) -> Callable[[F], F]:
    """Mark a function as the reference solution of ``exercises`` (it is returned as is)."""

    def mark(fn: F) -> F:
        fn.__reference_for__ = frozenset(exercises)
        return fn

    return mark
