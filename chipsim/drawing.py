"""Pictures of results, registered by :mod:`chipsim.viz`.

A graph, a memory plan and a report can draw themselves (``graph.draw()``, ``plan.draw()``,
``report.timeline()``, ``report.roofline()``), but the drawing code lives in
:mod:`chipsim.viz`, the layer above everything it draws (it reads results, duck-typed, and
needs matplotlib). So those methods do not import it: viz registers one function per kind
of picture here when it is imported (``import chipsim`` imports it), and the methods look
the function up by kind. The layers point one way: viz knows the results; the results know
only this table.

Example:
    >>> @drawable("square")
    ... def draw_square(obj, ax=None):
    ...     return f"a square of side {obj}"
    >>> draw("square", 3)
    'a square of side 3'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chipsim.errors import ChipsimError

#: kind of picture -> the function that draws it (``fn(obj, ax=None, **options)``)
DRAWINGS: dict[str, Callable[..., Any]] = {}


def drawable(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the one that draws pictures of ``kind``."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        DRAWINGS[kind] = fn
        return fn

    return register


def draw(kind: str, obj: Any, *args: Any, **kwargs: Any) -> Any:
    """Draw ``obj`` as a picture of ``kind`` with the function registered for it."""
    try:
        fn = DRAWINGS[kind]
    except KeyError:
        raise ChipsimError(
            f"nothing draws a {kind} yet: the drawings are registered by chipsim.viz; "
            "import chipsim (or chipsim.viz) first"
        ) from None
    return fn(obj, *args, **kwargs)
