"""Compose passes into a :class:`Pipeline` that reads like a recipe.

Example:
    >>> from chipsim.passes.pipeline import Pipeline
    >>> from chipsim.passes.simplify import dce, cse, fold_constants
    >>> simplify = Pipeline([fold_constants, cse, dce])
    >>> simplify.names
    ['fold_constants', 'cse', 'dce']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chipsim.errors import ChipsimError, PassError
from chipsim.ir.graph import Graph
from chipsim.ir.verify import verify

GraphPass = Callable[[Graph], Graph]
Instrument = Callable[[str, Graph], None]


def print_after(name: str, graph: Graph) -> None:
    """An instrument that prints the graph after every pass."""
    print(f"--- after {name} ---\n{graph}")


@dataclass(frozen=True)
class Pipeline:
    """Run graph-to-graph passes in order.

    Args:
        passes: the passes, each a function ``Graph -> Graph``.
        verify_each: verify the IR after every pass (tests turn this on).
        instruments: callables ``(pass_name, graph)`` run after every pass, e.g.
            :func:`print_after`.
    """

    passes: Sequence[GraphPass]
    verify_each: bool = True
    instruments: Sequence[Instrument] = field(default_factory=tuple)

    @property
    def names(self) -> list[str]:
        return [getattr(p, "__name__", type(p).__name__) for p in self.passes]

    def __call__(self, graph: Graph) -> Graph:
        done: list[str] = []
        for name, p in zip(self.names, self.passes, strict=True):
            try:
                graph = p(graph)
                if self.verify_each:
                    verify(graph)
            except ChipsimError as exc:
                raise PassError(f"pass {name!r} failed after {done}: {exc}") from exc
            except Exception as exc:  # a crash in a (learner's) pass still names the pass
                raise PassError(
                    f"pass {name!r} failed after {done}: {type(exc).__name__}: {exc}"
                ) from exc
            for instrument in self.instruments:
                instrument(name, graph)
            done.append(name)
        return graph
