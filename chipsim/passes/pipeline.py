"""Compose passes into a :class:`Pipeline` that reads like a recipe.

One idea, used three times: ``chipsim.passes.simplify`` is a pipeline of graph-to-graph
passes, the reference fusion is a pipeline of named :class:`Stage` objects over a fusion
state (:data:`chipsim.compiler.fusion.REFERENCE_FUSION`), and ``chipsim.compile`` is one over
a compile state (:data:`chipsim.PIPELINE`), in the spirit of TVM's ``Sequential``.

A stage declares what it **reads** and **writes** (fields of the state). The pipeline holds
it to that: a stage that reads a field only a later stage writes is refused when the
pipeline is made, and one that changes a field it does not declare fails when it runs. A
pipeline can be cut (:meth:`Pipeline.until`) or have one stage swapped for yours
(:meth:`Pipeline.replace`), and *instruments* watch it run: :class:`PrintAfterEach` prints
what each stage wrote (the IR, the partition, the plan), as TVM's pass instruments do.

Example:
    >>> from chipsim.passes.pipeline import Pipeline
    >>> from chipsim.passes.simplify import dce, cse, fold_constants
    >>> simplify = Pipeline([fold_constants, cse, dce])
    >>> simplify.names
    ['fold_constants', 'cse', 'dce']
    >>> simplify.until("cse").names
    ['fold_constants', 'cse']
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from chipsim.errors import ChipsimError, PassError
from chipsim.i18n import tr
from chipsim.ir.graph import Graph
from chipsim.ir.verify import verify

#: An instrument: ``instrument(name, result)`` after every pass; or an object with a method
#: ``after(stage, result)``, which also sees the stage (its name and what it writes).
Instrument = Callable[[str, Any], None]


def print_after(name: str, graph: Graph) -> None:
    """An instrument that prints the graph after every pass."""
    print(f"--- after {name} ---\n{graph}")


@dataclass(frozen=True)
class Stage:
    """A named step: ``run(x) -> x``, with one line saying what it does, and the fields of
    the state it reads and writes.

    Unpacks as ``(name, what)``, the two things a picture of a pipeline shows.
    """

    name: str
    what: str
    run: Callable[[Any], Any]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()

    def __call__(self, x: Any) -> Any:
        return self.run(x)

    def __iter__(self) -> Iterator[str]:
        return iter((self.name, self.what))


@dataclass(frozen=True)
class PrintAfterEach:
    """An instrument that prints, after each stage, what it wrote: the IR, a partition, a
    memory plan... (each field of :attr:`Stage.writes`; a pass over graphs: the graph).

    Example:
        >>> import numpy as np, chipsim as cs
        >>> from chipsim.compiler import PIPELINE, CompileState
        >>> until_fuse = PIPELINE.until("fuse").with_instruments(PrintAfterEach(("fuse",)))
        >>> g = cs.trace(lambda x: (x + 1).relu(), np.zeros(4, np.float32))
        >>> _ = until_fuse(CompileState(g, (), cs.chip("edge-npu")))
        --- after fuse: partition ---
        fused_add_relu: %2 %3
    """

    only: tuple[str, ...] = ()  # the stages to show (all by default)
    file: TextIO | None = None  # where to print (standard output by default)

    def after(self, stage: Stage, x: Any) -> None:
        if self.only and stage.name not in self.only:
            return
        out = self.file or sys.stdout
        if isinstance(x, Graph) or not stage.writes:
            print(tr("--- after {stage} ---", stage=stage.name), x, sep="\n", file=out)
            return
        for name in stage.writes:
            header = tr("--- after {stage}: {field} ---", stage=stage.name, field=name)
            print(header, getattr(x, name), sep="\n", file=out)

    def __call__(self, name: str, x: Any) -> None:  # a plain instrument, for passes alone
        self.after(Stage(name, "", lambda y: y), x)


def _as_stage(p: Callable[[Any], Any]) -> Stage:
    """A pass as a stage (a plain function: its name, nothing declared)."""
    if isinstance(p, Stage):
        return p
    name = getattr(p, "name", None) or getattr(p, "__name__", type(p).__name__)
    return Stage(name, "", p)


@dataclass(frozen=True)
class Pipeline:
    """Run passes (or :class:`Stage` objects) in order, each on the previous one's result.

    Args:
        passes: the passes, each a function ``Graph -> Graph`` (or ``state -> state``).
        verify_each: verify the IR after every pass that returns a graph.
        instruments: run after every pass: callables ``(pass_name, result)``, e.g.
            ``print_after``, or objects with ``after(stage, result)``, e.g.
            ``PrintAfterEach``.
        wrap_errors: turn any error into a :class:`~chipsim.errors.PassError` naming the pass
            and those before it. Without it (as ``compile`` runs), a
            :class:`~chipsim.errors.ChipsimError` keeps its kind and gains ``.stage`` and a
            note naming the stage; any other exception still becomes a ``PassError``.
        label: what a stage is called in messages (``compile stage 'fuse'``).

    Raises:
        PassError: a stage reads a field that only a later stage writes.
    """

    passes: Sequence[Callable[[Any], Any]]
    verify_each: bool = True
    instruments: Sequence[Instrument] = field(default_factory=tuple)
    wrap_errors: bool = True
    label: str = "stage"

    def __post_init__(self) -> None:
        stages = [_as_stage(p) for p in self.passes]
        products = {w for s in stages for w in s.writes}
        written: set[str] = set()
        for s in stages:
            early = [r for r in s.reads if r in products and r not in written]
            if early:
                raise PassError(
                    f"{self.label} {s.name!r} reads {early[0]!r}, which no stage before it "
                    f"writes (stages: {[t.name for t in stages]}); put the stage that writes "
                    "it first"
                )
            written.update(s.writes)

    @property
    def names(self) -> list[str]:
        return [_as_stage(p).name for p in self.passes]

    @property
    def stages(self) -> tuple[Callable[[Any], Any], ...]:
        return tuple(self.passes)

    def __iter__(self) -> Iterator[Callable[[Any], Any]]:
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise PassError(f"no {self.label} {name!r}; the stages are {self.names}")
        return self.names.index(name)

    def until(self, name: str) -> Pipeline:
        """The pipeline up to and including stage ``name`` (to look at what it made)."""
        return dataclasses.replace(self, passes=tuple(self.passes[: self._index(name) + 1]))

    def replace(self, name: str, stage: Callable[[Any], Any]) -> Pipeline:
        """The pipeline with stage ``name`` swapped for ``stage``; a plain function takes the
        old stage's name, description and declarations."""
        i = self._index(name)
        old = self.passes[i]
        if not isinstance(stage, Stage) and isinstance(old, Stage):
            stage = dataclasses.replace(old, run=stage)
        passes = (*self.passes[:i], stage, *self.passes[i + 1 :])
        return dataclasses.replace(self, passes=passes)

    def with_instruments(self, *instruments: Instrument) -> Pipeline:
        """The same pipeline, watched by ``instruments`` (after those it has)."""
        return dataclasses.replace(self, instruments=(*self.instruments, *instruments))

    def __call__(self, x: Any) -> Any:
        done: list[str] = []
        for p in self.passes:
            stage = _as_stage(p)
            name = stage.name
            try:
                before = x
                x = p(x)
                if self.verify_each and isinstance(x, Graph):
                    verify(x)
                if stage.writes:
                    _check_writes(stage, before, x)
            except ChipsimError as exc:
                if self.wrap_errors:
                    raise PassError(f"pass {name!r} failed after {done}: {exc}") from exc
                exc.stage = name  # type: ignore[attr-defined]
                exc.add_note(f"(in {self.label} {name!r})")
                raise
            except Exception as exc:  # a crash in a (learner's) pass still names the pass
                if self.wrap_errors:
                    raise PassError(
                        f"pass {name!r} failed after {done}: {type(exc).__name__}: {exc}"
                    ) from exc
                raise PassError(
                    f"{self.label} {name!r} failed: {type(exc).__name__}: {exc}"
                ) from exc
            for instrument in self.instruments:
                after = getattr(instrument, "after", None)
                if after is not None:
                    after(stage, x)
                else:
                    instrument(name, x)
            done.append(name)
        return x


def _check_writes(stage: Stage, before: Any, after: Any) -> None:
    """Refuse a stage that changed a field of the state it does not declare it writes."""
    if not dataclasses.is_dataclass(before) or type(before) is not type(after):
        return
    for f in dataclasses.fields(before):
        if f.name not in stage.writes and getattr(before, f.name) is not getattr(after, f.name):
            raise PassError(
                f"stage {stage.name!r} changed {f.name!r}, but it declares that it writes "
                f"only {list(stage.writes)}; declare it, or leave it as it was"
            )
