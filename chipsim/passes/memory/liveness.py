"""Liveness: when is each tensor alive on a schedule?

**The interval convention, stated once for the whole package.** A lifetime is the half-open
interval of schedule steps ``[first, last)``: a tensor is live at step ``t`` exactly when
``first <= t < last``, like Python's ``range(first, last)``. ``first`` is the step that produces
the tensor (0 for graph inputs); ``last`` is one past the step of its last reader. Two tensors
may share bytes only if their intervals do not intersect, so a tensor whose life ends at step 5
(``last == 5``) and one born at step 5 (``first == 5``) can share memory. The CSV form
(``id,lower,upper,size``) uses the same convention with ``lower = first`` and ``upper = last``.

Step ``t`` is the ``t``-th node of the schedule. A node's inputs and its output are live at the
same step (the node reads one while it writes the other), so they never share bytes.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((256,), f32, hint="x")
    >>> y = b.op("relu", x, hint="y")
    >>> z = b.op("exp", y, hint="z")
    >>> [str(r) for r in liveness(b.build(z))]
    ['x: 1024 B live [0, 1)', 'y: 1024 B live [0, 2)', 'z: 1024 B live [1, 2)']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chipsim.errors import PassError, PlanError
from chipsim.i18n import N_, tr
from chipsim.ir.graph import Graph, Node, Value
from chipsim.reference import reference_for

#: The one lifetime convention used by every module of :mod:`chipsim.passes.memory`.
INTERVAL_CONVENTION = N_("half-open [first, last): live at step t iff first <= t < last")

#: Default alignment of every buffer offset, in bytes (a cache line / DMA burst).
DEFAULT_ALIGNMENT = 64


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One tensor to place: its name, its size in bytes and its lifetime ``[first, last)``.

    Example:
        >>> r = UsageRecord("conv1", 4096, 2, 5)
        >>> r.live_at(4), r.live_at(5), r.length
        (True, False, 3)
    """

    id: str
    size: int
    first: int
    last: int

    def __post_init__(self) -> None:
        for name in ("size", "first", "last"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise PlanError(tr("tensor {id!r}: {name} must be an int, got {value!r}",
                                  id=self.id, name=name, value=value))  # fmt: skip
        if self.size < 0:
            raise PlanError(tr("tensor {id!r}: size must be >= 0 bytes, got {size}",
                              id=self.id, size=self.size))  # fmt: skip
        if self.first < 0:
            raise PlanError(tr("tensor {id!r}: first step must be >= 0, got {first}",
                              id=self.id, first=self.first))  # fmt: skip
        if self.last <= self.first:
            raise PlanError(tr(
                "tensor {id!r}: lifetime [{first}, {last}) is empty; last must be > first "
                "({convention})", id=self.id, first=self.first, last=self.last,
                convention=tr(INTERVAL_CONVENTION),
            ))  # fmt: skip

    @property
    def length(self) -> int:
        """Number of steps the tensor is live."""
        return self.last - self.first

    def live_at(self, step: int) -> bool:
        """True when the tensor is live at ``step``."""
        return self.first <= step < self.last

    def overlaps(self, other: UsageRecord) -> bool:
        """True when the two lifetimes share at least one step."""
        return self.first < other.last and other.first < self.last

    def __str__(self) -> str:
        live = tr(
            "{size} B live [{first}, {last})", size=self.size, first=self.first, last=self.last
        )
        return f"{self.id}: {live}"


def align_up(n: int, alignment: int) -> int:
    """Round ``n`` up to a multiple of ``alignment`` (``align_up(100, 64) == 128``)."""
    return -(-n // alignment) * alignment


def check_alignment(alignment: int) -> int:
    """Return ``alignment`` if it is a positive int, else raise :class:`PlanError`."""
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment < 1:
        raise PlanError(tr("alignment must be a positive int (bytes), got {alignment!r}",
                           alignment=alignment))  # fmt: skip
    return alignment


def records_from_uses(
    tensors: Iterable[tuple[str, int, int, Sequence[int], bool]], num_steps: int
) -> list[UsageRecord]:
    """The liveness rule, shared by graphs and hand-written networks.

    Args:
        tensors: ``(id, size, def_step, use_steps, is_output)`` per tensor, in the order the
            records should come out. ``def_step`` is 0 for inputs.
        num_steps: number of steps in the schedule; outputs stay live until then.

    Returns:
        One record per tensor, live from its definition to one past its last use (or to
        ``num_steps`` for outputs, or one step when nobody reads it).
    """
    records = []
    for name, size, born, uses, is_output in tensors:
        last = max(uses, default=born) + 1
        if is_output:
            last = max(last, num_steps)
        records.append(UsageRecord(name, size, born, last))
    return records


@reference_for("memory_planning")
def liveness(
    graph: Graph, schedule: Sequence[Node] | None = None, *, include_constants: bool = False
) -> list[UsageRecord]:
    """Usage records of every activation tensor of ``graph`` on ``schedule``.

    Args:
        graph: the graph to analyse.
        schedule: the order the nodes run in, a topological order of ``graph.nodes`` (default:
            the graph's own order). Step ``t`` is ``schedule[t]``.
        include_constants: constants (weights) normally live in their own read-only region, not
            in the activation arena, so they get no record. Pass True to plan them like
            ordinary tensors (live from their node to their last reader).

    Returns:
        Graph inputs first (live from step 0), then node outputs in schedule order. Graph
        outputs stay live to the end of the schedule. A record's id is the value's hint when it
        has a unique one, else its print name (``%3``).

    Raises:
        PassError: the schedule is not a topological order of the graph's nodes.
    """
    order = tuple(graph.nodes if schedule is None else schedule)
    step = _check_schedule(graph, order)
    users = graph.users()
    outputs = {id(v) for v in graph.outputs}
    ids = _record_ids(graph)

    def entry(value: Value, born: int) -> tuple[str, int, int, list[int], bool]:
        uses = [step[id(n)] for n in users.get(value, [])]
        return ids[value], value.type.nbytes, born, uses, id(value) in outputs

    tensors = [entry(v, 0) for v in graph.inputs]
    tensors += [
        entry(n.output, t) for t, n in enumerate(order) if include_constants or not n.is_constant
    ]
    return records_from_uses(tensors, max(len(order), 1))


@reference_for("memory_planning")
def _check_schedule(graph: Graph, order: tuple[Node, ...]) -> dict[int, int]:
    """Map id(node) -> step, after checking ``order`` is a topological order of the graph."""
    known = {id(n): n for n in graph.nodes}
    step: dict[int, int] = {}
    for t, node in enumerate(order):
        if id(node) not in known:
            raise PassError(tr("schedule step {t}: node {op!r} is not in graph {graph!r}",
                              t=t, op=node.op, graph=graph.name))  # fmt: skip
        if id(node) in step:
            raise PassError(tr("schedule step {t}: node {op!r} is scheduled twice", t=t,
                              op=node.op))  # fmt: skip
        step[id(node)] = t
    if len(step) != len(known):
        missing = next(n for n in graph.nodes if id(n) not in step)
        raise PassError(tr("the schedule misses node {op!r}; schedule every node once",
                          op=missing.op))  # fmt: skip
    producer = {id(n.output): n for n in graph.nodes}
    for t, node in enumerate(order):
        for v in node.inputs:
            p = producer.get(id(v))
            if p is not None and step[id(p)] >= t:
                raise PassError(tr(
                    "schedule step {t}: node {op!r} runs before the node that produces its "
                    "input ({producer!r} at step {at}); use a topological order",
                    t=t, op=node.op, producer=p.op, at=step[id(p)],
                ))  # fmt: skip
    return step


@reference_for("memory_planning")
def _record_ids(graph: Graph) -> dict[Value, str]:
    names = graph.names()
    counts = Counter(v.hint for v in names if v.hint)
    taken = set(names.values())  # never let a hint shadow a print name such as "%3"
    unique = {h for h, k in counts.items() if k == 1 and h not in taken}
    return {v: (v.hint if v.hint in unique else name) for v, name in names.items()}
