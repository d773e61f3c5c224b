"""What a part is: a graded test cell and its instances, each a family and a seed.

A *part* is one graded test cell of an exercise notebook; its id is the nbgrader ``grade_id``
of that cell (``fusion_chains``). Each part has visible instances (the learner sees and
self-checks them) and hidden ones (only the autograder's copy of the test cell asks for
them). An :class:`Instance` is a family (``make(seed) -> problem``) and a seed: a visible
instance's seed is public and fixed here; a hidden instance has **no seed in the package** —
the grader draws a fresh one for every submission, from a secret only it holds and the
submission's own digest (:mod:`grader.problems.hidden`), and binds it with :meth:`Part.bind`.
So the installed package can build *an* instance of every family, but not the ones a
submission is graded on, and what one grading shows a learner says nothing about the next.
A learner's kernel receives the hidden instances' *data* (graphs, records), never a seed, and
a hidden instance's name is its id, never its seed.

**One exception: the fusion challenge is graded on a benchmark.** A pass that searches with
the simulator spends seconds on each graph, so the challenge can afford only a few dozen of
them, and on a few dozen drawn graphs a middling pass's points moved by about a third of a
point from one course secret to the next (``benchmarks/README.md``). So its points come from
a fixed *benchmark* (:func:`benchmark`: seeds in the package, the same graphs for every
submission in every course run), and a few graphs drawn for the submission *check* it
(``Instance.check``): a pass that earns much less on them than on the benchmark, as a table of
answers prepared for the benchmark would, is graded on them instead
(:data:`~grader.scoring.partscore.CHECK_MARGIN`). Every instance is rebuilt from its
family and seed whenever the grader needs it, so the grader never uses an object that came
from a learner's kernel.

**Visible instances are for practice; the points come from the hidden ones.** The test cell
shows a provisional score on the visible instances; the grader scores every instance again and
counts only the hidden ones (the visible ones appear in the feedback as a preview), so a table
of the visible answers earns nothing.

Instance kinds (what the learner's function gets, and how the answer is scored):

========== ============================== ===============================================
kind       learner's function             score
========== ============================== ===============================================
classify   ``pattern_of(op)``,            exact: correct items beyond a constant guess
           ``may_fuse(producer, consumer)``
fusion     ``fn(graph, chip) -> Partition`` cycles between reference and no fusion
liveness   ``fn(graph, schedule)``          exact: fraction of correct usage records
units      ``fn(item, chip)``              exact: unit beyond chance, and its cycles
program    ``fn(kb)`` (a KernelBuilder)     cycles of the learner's instructions (and the
                                          DMA overlap, where the part says so)
first_fit  ``fn(records, alignment=64)``    exact: fraction of offsets equal to first fit's
arena      ``fn(records, alignment=64)``    arena bytes between reference and naive planner
plan       ``fn(records, alignment=64)``    cycles of the compiled program (no fusion)
========== ============================== ===============================================

The course's parts, assignment by assignment, are declared in :mod:`~grader.problems.parts`
with this module's :func:`visible`, :func:`drawn` and
:func:`benchmark`.

Example:
    >>> inst = visible("a", "fusion", lambda seed: seed * 10, seed=4)
    >>> inst.build(), inst.hidden
    (40, False)
    >>> drawn = drawn("h", "fusion", lambda seed: seed, 2)
    >>> [(i.id, i.seed, i.family) for i in drawn]
    [('h1', None, 'h'), ('h2', None, 'h')]
    >>> [i.seed == benchmark_seed(i.id) for i in benchmark(
    ...     "b", "fusion", lambda seed, stratum: seed, 2, strata=2, family="b")]
    [True, True]
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from chipsim.errors import ChipsimError
from chipsim.ir import Graph


class HiddenInstanceError(ChipsimError):
    """A hidden instance was asked for without its seed (only the grader has the seeds)."""


@dataclass(frozen=True, slots=True)
class Instance:
    """One problem instance: an id, its kind, its family ``make(seed)`` and its seed.

    A hidden instance's ``seed`` is None until the grader binds it (:meth:`Part.bind`).
    ``family``: the name of the family it was drawn from (hidden instances, ``tight_h``); a
    part's points weigh each family the same (:func:`~grader.scoring.credit.mean_credit`).
    ``stratum``: the row of its family's table of sizes it is drawn from (None: no table).
    ``benchmark``: hidden, but its seed is in the package, the same for every submission
    (:func:`benchmark`); ``check``: drawn for the submission to check a benchmark, and
    counted only when the learner's pass does much worse on it (see the module's text).
    """

    id: str
    kind: str
    make: Callable[[int], Any]
    seed: int | None = 0
    hidden: bool = False
    family: str = ""
    stratum: int | None = None
    benchmark: bool = False
    check: bool = False

    def build(self) -> Any:
        """The problem (a graph, records, ...), built afresh from the family and the seed.

        A hidden instance's graph is named after the instance, so nothing it carries names
        its seed."""
        if self.seed is None:
            raise HiddenInstanceError(
                f"instance {self.id!r} is hidden: it is drawn from the grader's secret and "
                "exists only while a notebook is graded"
            )
        problem = self.make(self.seed)
        return _renamed(problem, self.id) if self.hidden else problem


def _renamed(problem: Any, name: str) -> Any:
    """``problem`` with its graph (alone, or first of a tuple) called ``name``."""
    if isinstance(problem, Graph):
        return problem.replace(name=name)
    if isinstance(problem, tuple) and problem and isinstance(problem[0], Graph):
        return (problem[0].replace(name=name), *problem[1:])
    return problem


@dataclass(frozen=True, slots=True)
class Part:
    """One graded part (one nbgrader test cell).

    Attributes:
        id: the test cell's nbgrader ``grade_id``.
        assignment: the nbgrader assignment it belongs to.
        title: a short human title (English; shown translated with ``tr(part.title)``).
        points: the points of the test cell (the notebook's metadata must agree).
        functions: names of the learner's functions the test cell passes to ``submit``.
        forbidden: extra names this part asks learners to write themselves (flagged, see
            :mod:`~grader.course.static_check`).
        reference: the reference strategies; the best of them sets full credit.
        instances: visible and hidden instances, in scoring order.
        baseline: a strategy that earns :data:`~grader.scoring.credit.BASELINE_CREDIT`
            (the open challenges: the course's simple pass earns half, see
            :func:`~grader.scoring.credit.credit`); ``""``: linear from naive to reference.
        slack: full credit within this fraction of the reference's result.
        naive: the strategy that earns nothing (``""``: the instance kind's own naive
            answer: no fusion, no reuse).
    """

    id: str
    assignment: str
    title: str
    points: float
    functions: tuple[str, ...]
    forbidden: tuple[str, ...]
    reference: tuple[str, ...]
    instances: tuple[Instance, ...]
    baseline: str = ""
    slack: float = 0.0
    naive: str = ""

    def visible(self) -> list[Instance]:
        """The instances a learner sees and practises on (not counted in the grade)."""
        return [i for i in self.instances if not i.hidden]

    @property
    def challenge(self) -> bool:
        """An open challenge: the reference can be beaten, and the grade follows the draw."""
        return self.id.endswith("_challenge")

    def hidden(self) -> list[Instance]:
        """The instances only the grader asks for (drawn per submission, or a benchmark's)."""
        return [i for i in self.instances if i.hidden]

    def graded(self) -> list[Instance]:
        """The hidden instances the points come from (all but a benchmark's check)."""
        return [i for i in self.instances if i.hidden and not i.check]

    def checks(self) -> list[Instance]:
        """The hidden instances drawn to check a benchmark (none but the fusion challenge's)."""
        return [i for i in self.instances if i.check]

    def families(self) -> dict[str, str]:
        """``instance id -> family`` of the instances drawn from a family (the hidden ones);
        each family weighs the same in the part's points, whatever its number of instances
        (:func:`~grader.scoring.credit.mean_credit`), and every other instance is one of its
        own."""
        return {i.id: i.family for i in self.instances if i.family}

    def instance(self, instance_id: str) -> Instance:
        for i in self.instances:
            if i.id == instance_id:
                return i
        raise KeyError(f"part {self.id!r} has no instance {instance_id!r}")

    def bind(self, seeds: Mapping[str, int]) -> Part:
        """This part with its hidden instances' seeds (instance id -> seed) filled in."""
        bound = tuple(
            replace(i, seed=int(seeds[i.id]))
            if i.hidden and not i.benchmark and i.id in seeds
            else i
            for i in self.instances
        )
        return replace(self, instances=bound)


# -- declaring a part's instances ----------------------------------------------------------
def visible(id: str, kind: str, make: Callable[[int], Any], seed: int = 0) -> Instance:
    """A visible instance: ``make(seed)`` with a public seed."""
    return Instance(id, kind, make, seed)


def drawn(
    prefix: str,
    kind: str,
    make: Callable[..., Any],
    count: int,
    *,
    strata: int = 0,
    family: str = "",
    check: bool = False,
) -> tuple[Instance, ...]:
    """``count`` hidden instances ``<prefix>1 ...``: the family only; the grader supplies the
    seeds, new ones for every submission. With ``strata`` (the number of rows of the family's
    table of sizes), instance k is drawn from stratum k (``make(seed, stratum=k)``, row k
    modulo ``strata``, :mod:`~grader.problems.families`). Several instances per family, and
    strata, make a score that hangs on no single draw (``benchmarks/grading_spread.py``
    measures the spread). ``family``: the family's name (default: ``prefix``); ``check``:
    instances that check a benchmark (:func:`benchmark`) rather than count."""
    return tuple(
        Instance(f"{prefix}{k + 1}", kind, functools.partial(make, stratum=k) if strata else make,
                 None, True, family or prefix, k % strata if strata else None, check=check)
        for k in range(count)
    )  # fmt: skip


#: What a benchmark's seeds are derived from (public: anyone can build the benchmark).
BENCHMARK_SALT = "chipsim benchmark 2026"


def benchmark_seed(instance_id: str) -> int:
    """The published seed of the benchmark instance ``instance_id`` (64 bits).

    Example:
        >>> benchmark_seed("cnn_b1") == benchmark_seed("cnn_b1") != benchmark_seed("cnn_b2")
        True
    """
    digest = hashlib.sha256(f"{BENCHMARK_SALT}/{instance_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def benchmark(
    prefix: str, kind: str, make: Callable[..., Any], count: int, *, strata: int, family: str
) -> tuple[Instance, ...]:
    """``count`` hidden instances ``<prefix>1 ...`` with their seeds in the package
    (:func:`benchmark_seed`): the same graphs for every submission, drawn from the family's
    strata as :func:`drawn` draws them. They are hidden as the drawn ones are (the kernel
    gets their data, named by their ids), but anyone can build them: the graphs drawn for the
    submission that check them (``drawn(..., check=True)``) are what keeps a table of
    answers prepared for them from paying."""
    return tuple(
        replace(inst, seed=benchmark_seed(inst.id), benchmark=True)
        for inst in drawn(prefix, kind, make, count, strata=strata, family=family)
    )
