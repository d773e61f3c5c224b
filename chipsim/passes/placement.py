"""Placement: decide, before the program runs, which memory level holds each tensor.

This is the chapter's "W in DRAM, x in cache, b in registers" made concrete. The rules,
in order (the first that applies wins):

1. **Small constants** (a bias, a scale; at most :data:`REGISTER_LIMIT_BYTES` and rank <= 1)
   go to **registers** while the register file has room: every tile of every kernel reads
   them, so they are loaded once. When it is full, the rest stay in DRAM like weights.
2. **Other constants** (weights) stay in **DRAM** and are streamed tile by tile: they are
   read once per kernel, so keeping them on chip would waste the scarce SRAM.
3. **Activations** — graph inputs and tensors passed from one kernel to the next — go to
   **SRAM** at the memory plan's offsets when their slot lies inside the share of SRAM the
   arena may use (:data:`ARENA_SHARE` of it; the rest is the kernels' tile scratch).
   A tensor whose slot ends beyond that share **spills** to DRAM (same offset, inside a DRAM
   activation region): a smaller plan keeps more tensors on chip, and the program runs faster.
   An input that its one kernel streams tile by tile stays in DRAM, as in eager mode.
   On a chip with an **L2 cache** in front of DRAM (a GPU) there is no arena on chip: a
   kernel's on-chip memory (an SM's shared memory) does not outlive the kernel, so kernels
   pass activations through DRAM at the memory plan's offsets, and the cache keeps the
   recent ones on chip (:mod:`chipsim.hw.cache`); the SRAM is all tile scratch.
4. **Graph outputs** are written to **DRAM**, where the host reads them.
5. Values produced and consumed inside one fused kernel get **no** placement: they live in
   the kernel's tile buffers and never leave the chip — unless the kernel's working set does
   not fit SRAM even in one-row tiles: it then runs in spill mode and keeps them in its DRAM
   scratch (the table says so once the kernels are lowered, :attr:`Placement.in_scratch`).

DRAM is laid out as weights, the inputs (where the host writes them), the outputs, then the
spilled activations; kernels' spill scratch goes above. If that does not fit the chip's DRAM,
:func:`place` refuses the program with an :class:`~chipsim.errors.OutOfMemoryError` that
names the tensors: the error comes at compile time, not when the program runs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from chipsim.errors import OutOfMemoryError
from chipsim.i18n import N_, listing, tr
from chipsim.ir.graph import Graph, Node, Value
from chipsim.passes.memory.liveness import align_up
from chipsim.passes.placement_table import (
    HOST_THROUGH_L2,
    THROUGH_L2,
    table_html,
    table_rows,
    table_text,
)
from chipsim.target import Chip, Level

#: Largest constant (bytes) kept in registers.
REGISTER_LIMIT_BYTES = 256
#: Fraction of SRAM the activation arena may use; the rest is tile scratch for kernels.
ARENA_SHARE = 0.5
#: Every tensor starts at a multiple of this many bytes, at every level.
ALIGN = 64

DRAM, SRAM, REG = Level.DRAM, Level.SRAM, Level.REG


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one tensor lives: memory level, byte offset in its region, and why."""

    level: Level
    offset: int
    role: str
    why: str  # in English; :meth:`reason` gives it in the learner's language
    why_fields: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def reason(self) -> str:
        """:attr:`why` in the current language (its English template, fields filled in)."""
        if not self.why_fields:
            return tr(self.why)
        fields = dict(self.why_fields)
        return tr(_WHY[fields.pop("_why")], **fields)


#: The words :func:`place` writes in a slot's role and why (English): marked here for the
#: catalogue, translated where the table shows them (``tr(slot.role)``, :meth:`Slot.reason`).
_WORDS = (
    N_("fused intermediate"),
    N_("on-chip tiles"),
    N_("produced and consumed inside one kernel"),
    N_("registers"),
    N_("small constant"),
    N_("weight"),
    N_("input"),
    N_("output"),
    N_("intermediate"),
    N_("tiny and read by every tile: loaded into registers once"),
    N_("tiny, but the register file is full: kept in DRAM, loaded with its kernel"),
    N_("read once per kernel: streamed from DRAM tile by tile"),
    N_("returned to the host, which reads DRAM"),
    N_("an input returned as it is"),
    N_("read by one kernel that streams it tile by tile, as eager mode does"),
    N_("not read by any kernel"),
)
#: Reasons with numbers in them: English templates, filled in by :func:`_slot`.
_WHY = {
    "inside": N_("its plan slot ends at {end:,} B, inside {share:.0%} of SRAM"),
    "host": N_(
        "its plan slot ends at {end:,} B, beyond {share:.0%} of SRAM: read where the host wrote it"
    ),
    "spill": N_("its plan slot ends at {end:,} B, beyond {share:.0%} of SRAM: spilled to DRAM"),
}


def _slot(level: Level, offset: int, role: str, why: str, **fields: Any) -> Slot:
    """A slot whose reason is the template ``_WHY[why]`` with ``fields`` (English in ``why``)."""
    text = _WHY[why].format(**fields)
    return Slot(level, offset, role, text, tuple({"_why": why, **fields}.items()))


@dataclass(frozen=True, eq=False)
class Placement:
    """The memory level of every tensor a compiled program keeps between kernels."""

    graph: Graph
    slots: dict[Value, Slot]
    arena_bytes: int
    arena_level: Level
    host_inputs: dict[Value, int] = field(default_factory=dict)  # DRAM address of each input
    dram_bytes: int = 0  # DRAM laid out so far; kernels' spill scratch goes above it
    cached: bool = False  # the chip has an L2 cache: activations live in DRAM behind it
    #: intermediates of kernels that run in spill mode (their working set does not fit SRAM
    #: even in one-row tiles): kept in the kernel's DRAM scratch, not in tile buffers. Known
    #: once the kernels are lowered (:class:`~chipsim.runtime.program.Program` sets it).
    in_scratch: frozenset[Value] = frozenset()

    def level(self, value: Value) -> Level | None:
        slot = self.slots.get(value)
        return slot.level if slot else None

    def rows(self) -> list[dict[str, Any]]:
        """The placement table's rows, in the current language (:func:`table_rows`)."""
        return table_rows(self)

    def __str__(self) -> str:
        return table_text(self)

    def _repr_html_(self) -> str:
        return table_html(self)


def arena_budget(chip: Chip) -> int:
    """Bytes of SRAM the activation arena may use on ``chip`` (64-byte aligned): none on a
    chip with an L2 cache, whose kernels pass activations through DRAM (see rule 3)."""
    if chip.l2.present:
        return 0
    return int(chip.sram.capacity_bytes * ARENA_SHARE) // ALIGN * ALIGN


def is_small_constant(node: Node) -> bool:
    """A constant small enough for the register file (a bias, a scale): rule 1."""
    return node.is_constant and node.type.nbytes <= REGISTER_LIMIT_BYTES and node.type.rank <= 1


def level_for(
    node: Node | None, *, output: bool, streamed: bool, registers_free: bool, in_arena: bool
) -> Level:
    """The rules of the module docstring for one tensor (``node`` made it; None: a graph
    input): the level it lives in. The one statement of them: :func:`place` places a whole
    program by them, :func:`place_group` one kernel's tensors.

    Args:
        node: the node that defines the tensor (None for a graph input).
        output: the tensor is a graph output (rule 4).
        streamed: its one kernel streams it from DRAM tile by tile (rule 3).
        registers_free: the register file still has room for it (rule 1).
        in_arena: its slot lies inside the arena's share of SRAM, on a chip without an L2
            cache (rule 3).
    """
    if node is not None and node.is_constant:  # rules 1 and 2
        return REG if is_small_constant(node) and registers_free else DRAM
    if output or streamed:  # rules 4 and 3 (a streamed input)
        return DRAM
    return SRAM if in_arena else DRAM  # rule 3: in the arena, or spilled


class _Level:
    """One memory level being filled from address 0 upwards, with its capacity checked."""

    def __init__(self, name: Level, capacity: int) -> None:
        self.name, self.capacity, self.end = name, capacity, 0
        self.held: list[tuple[str, int]] = []  # (tensor, bytes) in address order

    def fits(self, nbytes: int) -> bool:
        return self.end + align_up(nbytes, ALIGN) <= self.capacity

    def take(self, label: str, nbytes: int) -> int:
        offset, self.end = self.end, self.end + align_up(nbytes, ALIGN)
        self.held.append((label, nbytes))
        return offset


def check_dram(capacity: int, held: Sequence[tuple[str, int]], what: str) -> None:
    """Raise :class:`~chipsim.errors.OutOfMemoryError` if ``held`` (tensor, bytes) overflows the
    chip's DRAM.

    DRAM is the one level a compile can run out of: constants that miss the register file and
    activations that miss the SRAM arena go to DRAM. ``what`` says what the program is, for the
    message; the tensors are listed largest first.
    """
    total = sum(align_up(n, ALIGN) for _, n in held)
    if total <= capacity:
        return
    big = sorted(held, key=lambda t: -t[1])
    listed = listing(f"{name} ({_mib(n)})" for name, n in big[:6])
    raise OutOfMemoryError(
        tr(
            "DRAM out of memory: {what} needs {total} of DRAM but the chip has {capacity}. It "
            "holds {listed}{more}. Use smaller inputs (e.g. a smaller batch, run the work in "
            "pieces), or a chip with more DRAM.",
            what=what,
            total=_mib(total),
            capacity=_mib(capacity),
            listed=listed,
            more=tr(" and {n} more", n=len(big) - 6) if len(big) > 6 else "",
        )
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n:,} B"


def place(
    graph: Graph,
    arena_values: dict[Value, int],
    arena_bytes: int,
    chip: Chip,
    *,
    streamed: Collection[Value] = (),
) -> Placement:
    """Choose a memory level and an address for every tensor that lives between kernels.

    Every level's capacity is checked: constants beyond the register file go to DRAM, the
    activations beyond the arena's share of SRAM spill to DRAM, and a program whose DRAM
    layout (weights, inputs, outputs, spilled activations) exceeds the chip's DRAM is refused
    with an :class:`~chipsim.errors.OutOfMemoryError` naming the tensors.

    Args:
        graph: the graph being compiled.
        arena_values: the activations the memory plan placed, with their plan offsets.
        arena_bytes: the plan's arena size.
        chip: the target chip (capacities of its registers, SRAM and DRAM).
        streamed: graph inputs the kernel that reads them streams from DRAM tile by tile
            (copying them on chip first would only delay that kernel); they stay in DRAM.
    """
    budget = arena_budget(chip)
    arena_level = SRAM if arena_bytes <= budget else DRAM
    names = graph.names()
    slots: dict[Value, Slot] = {}
    outputs = set(graph.outputs)
    regs = _Level(REG, chip.registers.capacity_bytes)
    dram = _Level(DRAM, chip.dram.capacity_bytes)

    def label(v: Value) -> str:
        return f"{v.hint or names[v]}: {v.type}"

    for node in graph.nodes:  # rules 1 and 2: constants
        if not node.is_constant:
            continue
        v = node.output
        fits = regs.fits(v.type.nbytes)
        level = level_for(node, output=False, streamed=False, registers_free=fits, in_arena=False)
        if level is REG:
            why = "tiny and read by every tile: loaded into registers once"
            slots[v] = Slot(REG, regs.take(label(v), v.type.nbytes), "small constant", why)
        elif is_small_constant(node):
            why = "tiny, but the register file is full: kept in DRAM, loaded with its kernel"
            slots[v] = Slot(DRAM, dram.take(label(v), v.type.nbytes), "small constant", why)
        else:
            why = "read once per kernel: streamed from DRAM tile by tile"
            slots[v] = Slot(DRAM, dram.take(label(v), v.type.nbytes), "weight", why)
    host = {v: dram.take(label(v), v.type.nbytes) for v in graph.inputs}  # the host writes here
    for v in graph.outputs:  # rule 4
        if v not in slots and v not in host:
            why = "returned to the host, which reads DRAM"
            slots[v] = Slot(DRAM, dram.take(label(v), v.type.nbytes), "output", why)
        elif v in host:
            slots[v] = Slot(DRAM, host[v], "output", "an input returned as it is")
    spilled = {v: o for v, o in arena_values.items() if o + v.type.nbytes > budget}
    # spilled inputs are read where the host wrote them; only intermediates need the region
    spill_end = max((o + v.type.nbytes for v, o in spilled.items() if v not in host), default=0)
    spill_base = dram.take("spilled activations", spill_end) if spill_end else dram.end
    for v, offset in arena_values.items():  # rule 3
        if v in outputs:
            continue
        role = "input" if v in graph.inputs else "intermediate"
        end = offset + v.type.nbytes
        inside = not chip.l2.present and v not in spilled
        level = level_for(
            None, output=False, streamed=v in streamed, registers_free=False, in_arena=inside
        )
        if level is SRAM:
            slots[v] = _slot(SRAM, offset, role, "inside", end=end, share=ARENA_SHARE)
        elif v in streamed:
            why = "read by one kernel that streams it tile by tile, as eager mode does"
            slots[v] = Slot(DRAM, host[v], role, why)
        elif chip.l2.present and v in host:
            slots[v] = Slot(DRAM, host[v], role, HOST_THROUGH_L2)
        elif chip.l2.present:
            slots[v] = Slot(DRAM, spill_base + offset, role, THROUGH_L2)
        elif v in host:
            slots[v] = _slot(DRAM, host[v], role, "host", end=end, share=ARENA_SHARE)
        else:
            slots[v] = _slot(DRAM, spill_base + offset, role, "spill", end=end, share=ARENA_SHARE)
    for v in graph.inputs:
        if v not in slots:
            slots[v] = Slot(DRAM, host[v], "input", "not read by any kernel")
    what = tr("the compiled program {name!r}", name=graph.name)
    check_dram(dram.capacity, dram.held, what)
    return Placement(
        graph, slots, arena_bytes, arena_level, host, align_up(dram.end, ALIGN), chip.l2.present
    )


def place_group(
    graph: Graph,
    chip: Chip,
    values: Sequence[Value],
    *,
    on_chip: bool,
    streamed: Collection[Value] = (),
) -> tuple[dict[Value, tuple[Level, int]], int]:
    """A stand-in placement of one group's inputs and outputs, for measuring it alone.

    The fusion search measures a candidate kernel before the memory plan exists. It uses the
    same rules as :func:`place` (:func:`level_for`), filling each level in order instead of
    at the plan's offsets: small constants in registers while they fit, the activations
    the kernel passes on in the arena's share of SRAM while they fit, the rest in DRAM. Without
    ``on_chip`` every tensor is in DRAM (the most pessimistic layout: "does it spill?").
    ``streamed`` inputs stay in DRAM, as in :func:`place`.

    Returns:
        ``{value: (level, offset)}`` and the first free DRAM address (for spill scratch).
    """
    producer = graph.producer()
    outputs = set(graph.outputs)
    regs = _Level(REG, chip.registers.capacity_bytes)
    sram = _Level(SRAM, arena_budget(chip))
    dram = _Level(DRAM, chip.dram.capacity_bytes)
    where: dict[Value, tuple[Level, int]] = {}
    for v in values:
        level = DRAM  # without on_chip: the most pessimistic layout
        if on_chip:
            level = level_for(
                producer.get(v),
                output=v in outputs,
                streamed=v in streamed,
                registers_free=regs.fits(v.type.nbytes),
                in_arena=sram.fits(v.type.nbytes),
            )
        store = {REG: regs, SRAM: sram, DRAM: dram}[level]
        where[v] = (level, store.take("", v.type.nbytes))
    return where, dram.end
