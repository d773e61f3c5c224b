"""The one DMA builder: every copy between memory levels is made here.

A transfer is one hardware operation of the DMA engine, whatever its size (the engine walks a
descriptor); its cost (setup, latency, bytes over bandwidth) is the ISA's. Row tiles, blocked
tiles and the program's input loads all call :func:`dma`, so they report alike.

Example:
    >>> from chipsim.hw.isa import Operand
    >>> src = Operand("dram", 0, (16, 8), "f32", None, "x")
    >>> i = dma("load", src, Operand("sram", 0, (16, 8), "f32", None, "x"), "relu")
    >>> i.unit, i.work, i.hw_ops, i.label
    ('dma', 512, 1, 'load x')
"""

from __future__ import annotations

from chipsim.errors import PlanError
from chipsim.hw.isa import Instr, Operand


def dma(opcode: str, src: Operand, dst: Operand, kernel: str, label: str = "") -> Instr:
    """A DMA transfer of ``src`` to ``dst`` (one hardware operation), part of ``kernel``.

    ``opcode`` is ``"load"`` (towards the compute units) or ``"store"`` (back to memory).
    """
    if opcode not in ("load", "store"):
        raise PlanError(f"a DMA transfer is a 'load' or a 'store', got {opcode!r}")
    return Instr(
        opcode,
        "dma",
        (src,),
        (dst,),
        work=src.nbytes,
        hw_ops=1,
        kernel=kernel,
        label=label or f"{opcode} {src.name}",
    )
