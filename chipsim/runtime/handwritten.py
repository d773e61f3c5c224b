"""Running a kernel written with the instruction-building API, and what its DMA overlapped.

A :class:`~chipsim.codegen.builder.KernelBuilder` holds one kernel's instructions; this module
runs them on a fresh simulator (inputs written into DRAM where the kernel's layout puts them,
outputs read back from there) and reports like any program: cycles, timeline, bytes moved.

Example:
    >>> import numpy as np
    >>> from chipsim.codegen.builder import KernelBuilder
    >>> from chipsim.hw import get_chip
    >>> from chipsim.ir import GraphBuilder, f32
    >>> g = GraphBuilder("mm")
    >>> x, w = g.input((8, 16), f32), g.input((16, 8), f32)
    >>> kb = KernelBuilder(g.build(g.op("matmul", x, w)), get_chip("edge-npu"))
    >>> t = kb.tile()
    >>> a, b = kb.load("%0", t, at=0), kb.load("%1", t, at=512)
    >>> kb.store("%2", t, kb.contract(t, at=1024, inputs={"%0": a, "%1": b}))
    >>> xs, ws = np.ones((8, 16), np.float32), np.ones((16, 8), np.float32)
    >>> (out,), report = run_kernel(kb, xs, ws)
    >>> float(out[0, 0]), report.cycles > 0
    (16.0, True)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from chipsim.codegen.builder import KernelBuilder
from chipsim.codegen.kernel import KernelSpan
from chipsim.codegen.link import operand
from chipsim.hw.simulator import Record, Simulator
from chipsim.ir.interpreter import bind_inputs
from chipsim.runtime.report import Report

_COMPUTE = ("tensor", "mac", "simd", "alu")


def run_kernel(
    kb: KernelBuilder, *args: Any, functional: bool = True
) -> tuple[list[np.ndarray], Report]:
    """Run ``kb``'s instructions on a fresh simulator; return ``(outputs, report)``.

    ``args`` are the graph's inputs (numpy arrays). ``functional=False`` computes no values
    (same cycles, no outputs); the arguments may then be omitted.
    """
    sim = Simulator(kb.chip, functional=functional)
    graph, where = kb.graph, kb.kernel.location
    if functional:
        env = bind_inputs(graph, tuple(args))
        for v in graph.inputs:
            sim.memory[where[v].level].write(operand(where[v], v, kb.names[v]), env[v])
    sim.run(kb.instructions)
    report = Report.from_records(
        kb.chip, sim.records, [KernelSpan(kb.kernel.name, 0, len(sim.records))]
    )
    if not functional:
        return [], report
    outs = [sim.memory[where[v].level].read(operand(where[v], v, kb.names[v]))
            for v in graph.outputs]  # fmt: skip
    return outs, report


def dma_overlap(records: Iterable[Record]) -> float:
    """The fraction of the DMA engine's busy cycles during which a compute unit was busy too.

    0 when every transfer waits for the compute before it (and the compute for it); near 1
    when the next tile's loads run while the current tile is computed (double buffering).

    Example:
        >>> from chipsim.hw.isa import Instr
        >>> r = lambda unit, s, e: Record(0, Instr("x", unit), s, e)
        >>> dma_overlap([r("dma", 0, 10), r("tensor", 5, 20), r("dma", 20, 30)])
        0.25
    """
    dma, busy = [], []
    for r in records:
        if r.instr.unit == "dma":
            dma.append((r.start, r.end))
        elif r.instr.unit in _COMPUTE:
            busy.append((r.start, r.end))
    total = sum(e - s for s, e in dma)
    if not total:
        return 0.0
    merged = _merge(busy)
    shared = sum(_covered(s, e, merged) for s, e in dma)
    return shared / total


def _merge(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _covered(s: int, e: int, merged: list[tuple[int, int]]) -> int:
    i = max(bisect_right(merged, (s, s)) - 1, 0)
    got = 0
    while i < len(merged) and merged[i][0] < e:
        lo, hi = max(s, merged[i][0]), min(e, merged[i][1])
        got += max(0, hi - lo)
        i += 1
    return got
