"""What a run cost: time, per-unit utilisation, bytes moved, peak memory, energy, kernels.

A :class:`Report` is built from the simulator's records plus the list of kernels (which
records belong to which kernel), so eager devices and compiled programs make the same kind
of report.

Example:
    >>> import numpy as np
    >>> from chipsim.ir import GraphBuilder, f32
    >>> from chipsim.runtime import make_device
    >>> b = GraphBuilder(); x = b.input((256,), f32); y = b.op("relu", x)
    >>> dev = make_device("edge-npu")
    >>> buf = dev.upload(np.ones(256, np.float32), x.type)
    >>> out = dev.run(b.nodes[0], [buf])
    >>> rep = dev.report
    >>> [k.name for k in rep.kernels], rep.cycles > 2000
    (['relu'], True)
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chipsim import drawing
from chipsim.codegen.kernel import KernelSpan
from chipsim.hw.chip import Chip
from chipsim.hw.isa import UNIT_TITLES, UNITS
from chipsim.hw.simulator import Record
from chipsim.i18n import N_, tr
from chipsim.target import LEVELS, Level
from chipsim.text import pad, text_width

_COMPUTE = ("tensor", "mac", "simd", "alu")
#: The kernel table's column titles (English; translated where shown).
_HEADERS = (
    N_("kernel"),
    N_("units"),
    N_("start"),
    N_("end"),
    N_("cycles"),
    N_("FLOPs"),
    N_("DRAM bytes"),
)


@dataclass(frozen=True, slots=True)
class KernelStat:
    """One row of the kernel table."""

    name: str
    units: tuple[str, ...]
    start: int
    end: int
    flops: int
    dram_bytes: int
    instructions: int
    hw_ops: int
    first: int = 0  # index of the kernel's first simulator record
    stop: int = 0  # one past its last record

    @property
    def cycles(self) -> int:
        return self.end - self.start

    @property
    def intensity(self) -> float:
        """FLOPs per DRAM byte (arithmetic intensity)."""
        return self.flops / self.dram_bytes if self.dram_bytes else float("inf")


def roofline_cycles(chip: Chip, flops: int, dram_bytes: int, units: Iterable[str]) -> float:
    """The roofline bound: max(FLOPs / peak of the units used, bytes / DRAM bandwidth)."""
    peaks = {
        "tensor": chip.tensor_flops_per_cycle,
        "simd": chip.vector_flops_per_cycle,
        "mac": 2 * chip.mac.macs_per_cycle,
        "alu": 2 * chip.alu.count / chip.alu.cycles_per_op,
    }
    peak = max([peaks[u] for u in units if u in peaks], default=0)
    compute = flops / peak if peak else 0.0
    return max(compute, dram_bytes / chip.dram.bytes_per_cycle)


@dataclass(frozen=True, eq=False)
class Report:
    """The cost of a run on a chip (see the module docstring)."""

    chip: Chip
    cycles: int
    kernels: tuple[KernelStat, ...]
    unit_busy: Mapping[str, int]
    bytes_moved: Mapping[str, int]
    peak_bytes: Mapping[str, int]
    energy_pj: Mapping[str, float]
    records: tuple[Record, ...] = field(repr=False, default=())
    memory_history: tuple[Any, ...] = field(repr=False, default=())

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def from_records(
        chip: Chip,
        records: Sequence[Record],
        spans: Sequence[KernelSpan],
        peak_bytes: Mapping[str, int] | None = None,
        memory_history: Sequence[Any] = (),
    ) -> Report:
        """Summarise simulator ``records`` grouped into kernels by ``spans``."""
        busy = dict.fromkeys(UNITS, 0)
        moved = dict.fromkeys(LEVELS, 0)
        peak = dict.fromkeys(LEVELS, 0)
        macs = ops = 0
        for r in records:
            ins = r.instr
            busy[ins.unit] += r.end - r.start
            for o in (*ins.srcs, *ins.dsts):
                if o.level != Level.DRAM or r.traffic is None:  # via an L2: counted below
                    moved[o.level] += o.nbytes
                peak[o.level] = max(peak[o.level], o.byte_range()[1])
                if ins.unit in _COMPUTE:
                    moved[Level.REG] += o.nbytes  # compute units read and write via registers
            if r.traffic is not None:  # through an L2: DRAM moved only misses and write-backs;
                moved[Level.DRAM] += r.traffic.dram_bytes  # the hits are on-chip (L2) bytes
                moved[Level.SRAM] += r.traffic.hit
            if ins.unit in ("tensor", "mac"):
                macs += ins.flops // 2
            elif ins.unit in ("simd", "alu"):
                ops += max(ins.flops, ins.work if ins.unit == "alu" else 0)
        if peak_bytes:
            peak.update(peak_bytes)
        e = chip.energy
        energy = {
            "compute": macs * e.mac_pj + ops * e.op_pj,
            Level.DRAM: moved[Level.DRAM] * e.dram_byte_pj,
            Level.SRAM: moved[Level.SRAM] * e.sram_byte_pj,
            Level.REG: moved[Level.REG] * e.reg_byte_pj,
        }
        kernels = tuple(_kernel_stat(s, records) for s in spans if s.stop > s.first)
        cycles = max((r.end for r in records), default=0)
        return Report(
            chip, cycles, kernels, busy, moved, peak, energy, tuple(records), tuple(memory_history)
        )

    # -- derived numbers ----------------------------------------------------------------------
    @property
    def seconds(self) -> float:
        return self.cycles / self.chip.clock_hz

    @property
    def utilization(self) -> dict[str, float]:
        """Busy share of each unit over the whole run."""
        return {u: (b / self.cycles if self.cycles else 0.0) for u, b in self.unit_busy.items()}

    @property
    def total_energy_pj(self) -> float:
        return sum(self.energy_pj.values())

    @property
    def flops(self) -> int:
        return sum(k.flops for k in self.kernels)

    def kernel(self, name: str) -> KernelStat:
        """The first kernel called ``name``."""
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel named {name!r}; kernels: {[k.name for k in self.kernels]}")

    # -- views --------------------------------------------------------------------------------
    def summary_lines(self) -> list[str]:
        us = self.seconds * 1e6
        util = ", ".join(f"{tr(UNIT_TITLES[u])} {v:.0%}" for u, v in self.utilization.items() if v)
        moved = ", ".join(f"{lv.upper()} {_bytes(b)}" for lv, b in self.bytes_moved.items())
        peak = ", ".join(f"{lv.upper()} {_bytes(b)}" for lv, b in self.peak_bytes.items())
        return [
            tr(
                "{chip}: {cycles:,} cycles = {us:,.2f} us, {kernels} kernels, {flops:,} FLOPs, "
                "energy {uj:,.3f} uJ",
                chip=self.chip.name,
                cycles=self.cycles,
                us=us,
                kernels=len(self.kernels),
                flops=self.flops,
                uj=self.total_energy_pj / 1e6,
            ),
            tr("busy: {units}", units=util),
            tr("moved: {levels}", levels=moved),
            tr("peak: {levels}", levels=peak),
        ]

    def table_rows(self) -> list[tuple[str, ...]]:
        rows = [tuple(tr(h) for h in _HEADERS)]
        for k in self.kernels:
            rows.append(
                (
                    k.name,
                    "+".join(k.units),
                    f"{k.start:,}",
                    f"{k.end:,}",
                    f"{k.cycles:,}",
                    f"{k.flops:,}",
                    f"{k.dram_bytes:,}",
                )
            )
        return rows

    def __str__(self) -> str:
        rows = self.table_rows()
        shown = rows if len(rows) <= 41 else rows[:21] + [("...",) * 7] + rows[-20:]
        widths = [max(text_width(r[i]) for r in shown) for i in range(7)]
        lines = self.summary_lines()
        for j, r in enumerate(shown):
            lines.append(
                "  ".join(
                    pad(c, w) if i < 2 else pad(c, w, right=True)
                    for i, (c, w) in enumerate(zip(r, widths, strict=False))
                )
            )
            if j == 0:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Report {self.chip.name}: {self.cycles:,} cycles, {len(self.kernels)} kernels>"

    def _repr_html_(self) -> str:
        head = "".join(f"<p>{html.escape(line)}</p>" for line in self.summary_lines())
        rows = self.table_rows()
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:201]
        )
        th = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        return f"<div>{head}<table><tr>{th}</tr>{body}</table></div>"

    def timeline(self, ax: Any = None, **kwargs: Any) -> Any:
        """Per-unit timeline: one row per unit, one bar per instruction, kernels labelled."""
        return drawing.draw("timeline", self, ax=ax, **kwargs)

    def roofline(self, ax: Any = None, **kwargs: Any) -> Any:
        """The chip's roofline with every kernel placed on it."""
        return drawing.draw("roofline", self, ax=ax, **kwargs)


def _kernel_stat(span: KernelSpan, records: Sequence[Record]) -> KernelStat:
    recs = records[span.first : span.stop]
    units: list[str] = []
    flops = dram = hw = 0
    for r in recs:
        ins = r.instr
        if ins.unit != "host" and ins.unit not in units:
            units.append(ins.unit)
        flops += ins.flops
        hw += ins.hw_ops
        dram += r.dram_bytes
    units.sort(key=UNITS.index)
    # A kernel starts when its first instruction on the chip starts: the launch record on the
    # host queue may sit far earlier (launches are asynchronous), and waiting is not work.
    on_chip = [r.start for r in recs if r.instr.unit != "host"]
    return KernelStat(
        span.name,
        tuple(units),
        min(on_chip or [r.start for r in recs]),
        max(r.end for r in recs),
        flops,
        dram,
        len(recs),
        hw,
        span.first,
        span.stop,
    )


def _bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"
