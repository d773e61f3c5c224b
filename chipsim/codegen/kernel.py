"""What a kernel is: a group of nodes run as one launch, and where its tensors live.

Eager mode makes one :class:`KernelSpec` per op; the compiler makes one per fused group.
Both go through the same :func:`~chipsim.codegen.lower.lower`.

Example:
    >>> from chipsim.ir import GraphBuilder, f32
    >>> b = GraphBuilder()
    >>> x = b.input((4, 8), f32)
    >>> y = b.op("relu", b.op("add", x, b.const(1.0)))
    >>> g = b.build(y)
    >>> kernel_name(g.nodes)
    'fused_add_relu'
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

from chipsim.errors import PlanError
from chipsim.ir.graph import Graph, Node, Value
from chipsim.passes.fusion.boundary import kernel_boundary, reads_of
from chipsim.passes.fusion.naming import name_of_nodes
from chipsim.target import Level


@dataclass(frozen=True, slots=True)
class KernelSpan:
    """Instructions (or simulator records) ``[first, stop)`` belong to kernel ``name``."""

    name: str
    first: int
    stop: int


@dataclass(frozen=True, slots=True)
class Location:
    """Where a tensor lives: a memory :class:`~chipsim.target.Level` and a byte offset."""

    level: Level
    offset: int

    def __post_init__(self) -> None:
        if self.level not in (Level.DRAM, Level.SRAM, Level.REG):
            raise PlanError(f"Location level must be 'dram', 'sram' or 'reg', got {self.level!r}")
        if not isinstance(self.offset, int) or self.offset < 0:
            raise PlanError(f"Location offset must be an int >= 0, got {self.offset!r}")


def kernel_name(nodes: Iterable[Node]) -> str:
    """``"add"`` for one op, ``"fused_matmul_add_relu"`` for a group (constants left out)."""
    return name_of_nodes(list(nodes))


@dataclass(frozen=True, eq=False)
class KernelSpec:
    """A group of nodes from one graph, in topological order, to run as one kernel.

    Attributes:
        name: the kernel's name (see :func:`kernel_name`).
        nodes: the group's nodes, in topological order.
        inputs: values read from outside the group.
        outputs: values the group writes out (read after the kernel).
        location: where each input and output lives (and each constant the caller has
            placed in DRAM; unplaced constants are written by the ALU as immediates).
            Intermediates stay in SRAM; the kernel manages its own SRAM scratch.
        sram_window: the SRAM byte range ``[lo, hi)`` the kernel may use as scratch
            (default: all of SRAM). Keep tensors placed in SRAM outside it.
        scratch: a DRAM area for intermediates when the group's working set does not fit
            SRAM even in one-row tiles (see :func:`~chipsim.codegen.planning.scratch_bytes`).
    """

    name: str
    nodes: tuple[Node, ...]
    inputs: tuple[Value, ...]
    outputs: tuple[Value, ...]
    location: Mapping[Value, Location] = field(default_factory=dict)
    sram_window: tuple[int, int] | None = None
    scratch: Location | None = None

    @staticmethod
    def of(
        nodes: Iterable[Node], outputs: Iterable[Value], location: Mapping[Value, Location]
    ) -> KernelSpec:
        """A spec whose name and inputs are derived from ``nodes``."""
        nodes = tuple(nodes)
        return KernelSpec(kernel_name(nodes), nodes, reads_of(nodes), tuple(outputs), location)

    @staticmethod
    def of_group(
        graph: Graph, group: Iterable[int], location: Mapping[Value, Location]
    ) -> KernelSpec:
        """The spec of a group of ``graph``'s nodes (indices): what it reads and writes is
        the group's boundary (:func:`~chipsim.passes.fusion.boundary.kernel_boundary`)."""
        group = sorted(group)
        edge = kernel_boundary(graph, group)
        nodes = tuple(graph.nodes[i] for i in group)
        return KernelSpec(kernel_name(nodes), nodes, edge.reads, edge.writes, location)

    def signature(self, *, levels_only: bool = False) -> Hashable:
        """What the code generator sees of this kernel, with its values named by position:
        two kernels with equal signatures lower to the same instructions (up to value names),
        so they take the same cycles. A model's repeated layers give equal signatures, which
        is what lets the fusion search and the code generator memoise their work.

        Every value is named by where it first appears (``("in", i)``: the i-th input,
        ``("node", j)``: the j-th node's output); a located value that is neither keeps its
        identity, so such a kernel matches no other. With ``levels_only``, only each located
        value's memory level is kept, and the name, SRAM window and scratch are left out:
        what choosing the tile sizes of a blocked kernel reads.
        """
        names: dict[Value, Hashable] = {v: ("in", i) for i, v in enumerate(self.inputs)}
        nodes = []
        for j, n in enumerate(self.nodes):
            nodes.append((n.op, n.attrs, n.type, tuple(names.get(v, v) for v in n.inputs)))
            names.setdefault(n.output, ("node", j))
        located = tuple(
            (names.get(v, v), where.level if levels_only else where)
            for v, where in self.location.items()
        )
        structure = (
            tuple(v.type for v in self.inputs),
            tuple(nodes),
            tuple(names.get(v, v) for v in self.outputs),
            located,
        )
        if levels_only:
            return structure
        return (self.name, *structure, self.sram_window, self.scratch)
