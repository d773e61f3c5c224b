"""Over-fusion: a kernel whose working set outgrows SRAM gets *slower*, and splitting fixes it.

Fusing ops into one kernel keeps intermediates on chip, which usually pays. But a kernel
computes its output a tile of rows at a time, and every tile needs the **whole** weight of
every matmul in the kernel. Fuse two matmuls whose weights each fit the chip's scratchpad
but not together, and no tile fits at all: the kernel *spills*, every unit reads and writes
DRAM directly, and DMA no longer overlaps compute. Split the group into two kernels, one per
matmul, and each kernel fits again (tiling its weight by blocks if it must): the program
pays one more kernel launch and one more round trip of the hidden activation, and still
wins.

Example:
    >>> g, fused_all, split = overfusion_demo()
    >>> len(fused_all.groups), len(split.groups)
    (1, 2)
"""

from __future__ import annotations

import numpy as np

from chipsim.hw.chip import Chip, get_chip
from chipsim.ir import Graph, GraphBuilder, f32
from chipsim.passes.fusion import Partition


def overfusion_demo(
    chip: str | Chip = "edge-npu", rows: int = 64
) -> tuple[Graph, Partition, Partition]:
    """A two-layer MLP ``relu(x @ W1 + b1) @ W2 + b2`` sized to over-fuse on ``chip``.

    Each weight is a square f32 matrix as large as half the chip's SRAM (256 x 256 on
    edge-npu: 256 KiB each, 512 KiB of SRAM), so one weight fits the SRAM a kernel may use,
    two do not.

    Args:
        chip: the target chip (a preset name or a :class:`~chipsim.hw.chip.Chip`).
        rows: rows of the input ``x``.

    Returns:
        ``(graph, fused_all, split)``: the graph, the partition with every op in one kernel,
        and the partition with one kernel per layer.
    """
    chip = get_chip(chip)
    d = 16
    while (2 * d) ** 2 * f32.itemsize <= chip.sram.capacity_bytes // 2:
        d *= 2
    rng = np.random.default_rng(0)
    b = GraphBuilder("overfused_mlp")
    x = b.input((rows, d), f32, "x")

    def layer(h):
        w = b.const((rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32))
        bias = b.const((rng.standard_normal(d) * 0.1).astype(np.float32))
        return b.op("add", b.op("matmul", h, w), bias)

    y = layer(b.op("relu", layer(x)))
    graph = b.build(y)
    ops = [i for i, n in enumerate(graph.nodes) if not n.is_constant]
    second = [i for i in ops if graph.nodes[i].op == "matmul"][1]
    fused_all = Partition([ops], graph=graph)
    split = Partition(
        [[i for i in ops if i < second], [i for i in ops if i >= second]], graph=graph
    )
    return graph, fused_all, split
