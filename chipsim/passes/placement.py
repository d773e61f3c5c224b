"""Placement: decide, before the program runs, which memory level holds each tensor.

This is the chapter's "W in DRAM, x in cache, b in registers" made concrete. The rules,
in order (the first that applies wins):

1. **Small constants** (a bias, a scale; at most :data:`REGISTER_LIMIT_BYTES` and rank <= 1)
   go to **registers**: every tile of every kernel reads them, so they are loaded once.
2. **Other constants** (weights) stay in **DRAM** and are streamed tile by tile: they are
   read once per kernel, so keeping them on chip would waste the scarce SRAM.
3. **Activations** — graph inputs and tensors passed from one kernel to the next — go to
   **SRAM** at the memory plan's offsets when their slot lies inside the share of SRAM the
   arena may use (:data:`ARENA_SHARE` of it; the rest is the kernels' tile scratch).
   A tensor whose slot ends beyond that share **spills** to DRAM (same offset, inside a DRAM
   activation region): a smaller plan keeps more tensors on chip, and the program runs faster.
4. **Graph outputs** are written to **DRAM**, where the host reads them.
5. Values produced and consumed inside one fused kernel get **no** placement: they live in
   the kernel's tile buffers and never leave the chip.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from chipsim.ir.graph import Graph, Value

#: Largest constant (bytes) kept in registers.
REGISTER_LIMIT_BYTES = 256
#: Fraction of SRAM the activation arena may use; the rest is tile scratch for kernels.
ARENA_SHARE = 0.5

DRAM, SRAM, REG = "dram", "sram", "reg"


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one tensor lives: memory level, byte offset in its region, and why."""

    level: str
    offset: int
    role: str
    why: str


@dataclass(frozen=True, eq=False)
class Placement:
    """The memory level of every tensor a compiled program keeps between kernels."""

    graph: Graph
    slots: dict[Value, Slot]
    arena_bytes: int
    arena_level: str

    def level(self, value: Value) -> str | None:
        slot = self.slots.get(value)
        return slot.level if slot else None

    def rows(self) -> list[dict[str, Any]]:
        names = self.graph.names()
        rows = []
        for v in (*self.graph.inputs, *(n.output for n in self.graph.nodes)):
            slot = self.slots.get(v)
            label = f"{names[v]} ({v.hint})" if v.hint else names[v]
            if slot is None:
                rows.append(
                    {
                        "tensor": label,
                        "type": str(v.type),
                        "role": "fused intermediate",
                        "level": "on-chip tiles",
                        "offset": "-",
                        "why": "produced and consumed inside one kernel",
                    }
                )
            else:
                rows.append(
                    {
                        "tensor": label,
                        "type": str(v.type),
                        "role": slot.role,
                        "level": slot.level.upper() if slot.level != REG else "registers",
                        "offset": slot.offset,
                        "why": slot.why,
                    }
                )
        return rows

    def __str__(self) -> str:
        rows = self.rows()
        cols = ["tensor", "type", "role", "level", "offset", "why"]
        widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
        lines = [
            "  ".join(c.ljust(widths[c]) for c in cols),
            "  ".join("-" * widths[c] for c in cols),
        ]
        lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in cols) for r in rows]
        spilled = sum(
            1
            for s in self.slots.values()
            if s.role in ("input", "intermediate") and s.level == DRAM
        )
        lines.append(
            f"activation arena: {self.arena_bytes:,} bytes; {spilled} activation(s) spilled to DRAM"
        )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cols = ["tensor", "type", "role", "level", "offset", "why"]
        head = "".join(f"<th>{c}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in cols) + "</tr>"
            for r in self.rows()
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def arena_budget(chip: Any) -> int:
    """Bytes of SRAM the activation arena may use on ``chip`` (64-byte aligned)."""
    return int(chip.sram.capacity_bytes * ARENA_SHARE) // 64 * 64


def place(graph: Graph, arena_values: dict[Value, int], arena_bytes: int, chip: Any) -> Placement:
    """Choose a memory level for every tensor that lives between kernels.

    Args:
        graph: the graph being compiled.
        arena_values: the activations the memory plan placed, with their plan offsets.
        arena_bytes: the plan's arena size.
        chip: the target chip (its ``sram.capacity_bytes`` decides what stays on chip).
    """
    budget = arena_budget(chip)
    arena_level = SRAM if arena_bytes <= budget else DRAM
    slots: dict[Value, Slot] = {}
    outputs = set(graph.outputs)
    weight_offset = reg_offset = 0  # weights pack DRAM from 0, small constants the registers
    for node in graph.nodes:
        if node.op != "constant":
            continue
        v, size = node.output, -(-node.type.nbytes // 64) * 64
        if v.type.nbytes <= REGISTER_LIMIT_BYTES and v.type.rank <= 1:
            why = "tiny and read by every tile: loaded into registers once"
            slots[v] = Slot(REG, reg_offset, "small constant", why)
            reg_offset += size
        else:
            why = "read once per kernel: streamed from DRAM tile by tile"
            slots[v] = Slot(DRAM, weight_offset, "weight", why)
            weight_offset += size
    share = f"{int(ARENA_SHARE * 100)}% of SRAM"
    for v, offset in arena_values.items():
        role = "input" if v in graph.inputs else "intermediate"
        end = offset + v.type.nbytes
        if end <= budget:
            slots[v] = Slot(SRAM, offset, role, f"its plan slot ends at {end:,} B, inside {share}")
        else:
            why = f"its plan slot ends at {end:,} B, beyond {share}: spilled to DRAM"
            slots[v] = Slot(DRAM, offset, role, why)
    for v in graph.outputs:
        if v not in slots or slots[v].role != "weight":
            slots[v] = Slot(DRAM, 0, "output", "returned to the host, which reads DRAM")
    for v in graph.inputs:
        if v not in slots and v not in outputs:
            slots[v] = Slot(DRAM, 0, "input", "not read by any kernel")
    return Placement(graph, slots, arena_bytes, arena_level)
