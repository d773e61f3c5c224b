"""Compose passes into a :class:`Pipeline` that reads like a recipe.

One idea, used twice: ``chipsim.passes.simplify`` is a pipeline of graph-to-graph passes, and
``chipsim.compile`` is a pipeline of named :class:`Stage` objects over a compile state
(:data:`chipsim.PIPELINE`), in the spirit of TVM's ``Sequential``.

Example:
    >>> from chipsim.passes.pipeline import Pipeline
    >>> from chipsim.passes.simplify import dce, cse, fold_constants
    >>> simplify = Pipeline([fold_constants, cse, dce])
    >>> simplify.names
    ['fold_constants', 'cse', 'dce']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from chipsim.errors import ChipsimError, PassError
from chipsim.ir.graph import Graph
from chipsim.ir.verify import verify

Instrument = Callable[[str, Any], None]


def print_after(name: str, graph: Graph) -> None:
    """An instrument that prints the graph after every pass."""
    print(f"--- after {name} ---\n{graph}")


@dataclass(frozen=True)
class Stage:
    """A named step: ``run(x) -> x``, with one line saying what it does.

    Unpacks as ``(name, what)``, the two things a picture of a pipeline shows.
    """

    name: str
    what: str
    run: Callable[[Any], Any]

    def __call__(self, x: Any) -> Any:
        return self.run(x)

    def __iter__(self) -> Iterator[str]:
        return iter((self.name, self.what))


@dataclass(frozen=True)
class Pipeline:
    """Run passes (or :class:`Stage` objects) in order, each on the previous one's result.

    Args:
        passes: the passes, each a function ``Graph -> Graph`` (or ``state -> state``).
        verify_each: verify the IR after every pass that returns a graph.
        instruments: callables ``(pass_name, result)`` run after every pass, e.g.
            :func:`print_after`.
        wrap_errors: turn any error into a :class:`~chipsim.errors.PassError` naming the pass
            and those before it. Without it (as ``compile`` runs), a
            :class:`~chipsim.errors.ChipsimError` keeps its kind and gains ``.stage`` and a
            note naming the stage; any other exception still becomes a ``PassError``.
    """

    passes: Sequence[Callable[[Any], Any]]
    verify_each: bool = True
    instruments: Sequence[Instrument] = field(default_factory=tuple)
    wrap_errors: bool = True

    @property
    def names(self) -> list[str]:
        return [
            getattr(p, "name", None) or getattr(p, "__name__", type(p).__name__)
            for p in self.passes
        ]

    @property
    def stages(self) -> tuple[Callable[[Any], Any], ...]:
        return tuple(self.passes)

    def __iter__(self) -> Iterator[Callable[[Any], Any]]:
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def __call__(self, x: Any) -> Any:
        done: list[str] = []
        for name, p in zip(self.names, self.passes, strict=True):
            try:
                x = p(x)
                if self.verify_each and isinstance(x, Graph):
                    verify(x)
            except ChipsimError as exc:
                if self.wrap_errors:
                    raise PassError(f"pass {name!r} failed after {done}: {exc}") from exc
                exc.stage = name  # type: ignore[attr-defined]
                exc.add_note(f"(in compile stage {name!r})")
                raise
            except Exception as exc:  # a crash in a (learner's) pass still names the pass
                if self.wrap_errors:
                    raise PassError(
                        f"pass {name!r} failed after {done}: {type(exc).__name__}: {exc}"
                    ) from exc
                raise PassError(
                    f"compile stage {name!r} failed: {type(exc).__name__}: {exc}"
                ) from exc
            for instrument in self.instruments:
                instrument(name, x)
            done.append(name)
        return x
