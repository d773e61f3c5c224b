"""A back-of-the-envelope estimate of how long one fused kernel takes on a chip.

The reference fusion pass uses it in its last, cost-aware step (see
:mod:`chipsim.passes.fusion.reference`) to decide whether merging two kernels pays. It is a
roofline with a launch cost, the same picture the book draws::

    cycles = launch + max(compute, DRAM traffic)     (or their sum, see below)

Kernels of a compiled program run one after another (stream order), so a program takes about
the **sum** of its kernels' times: the cost-aware step adds these estimates up.
    compute = tensor FLOPs / tensor peak + vector work / vector peak
    DRAM traffic = (bytes read from outside the kernel + bytes written out) / DRAM bandwidth

* **Launch.** Every kernel of a compiled program pays ``chip.launch.graph_cycles`` before it
  does any work. For small tensors this dominates, so merging small kernels pays.
* **Traffic.** A value made and used inside the kernel stays on chip. Weights are read from
  DRAM and graph outputs written to DRAM. Activations passed between kernels stay in the
  compiler's SRAM arena when they are small (:func:`on_chip_limit`), else they cross the DRAM
  bus: this is what fusion saves on large, memory-bound tensors.
* **Compute.** Tensor-core FLOPs (matmul sides rounded up to whole tiles) over its peak, plus
  vector element-slots (each op's ``vector_slots``: ``exp`` costs 4 per element) over the
  SIMD lanes.
* **Overlap.** A kernel tiled over its rows streams: DMA for the next tile runs while the
  units compute this one, so time is the *max* of compute and traffic. A kernel that mixes
  rows (a transpose, a reduction over axis 0) cannot be cut into row tiles: it loads
  everything, computes, then stores, so time is the *sum*. If such a kernel's data does not fit
  in SRAM either, its intermediates spill to DRAM and are written and read back.

The chip is read duck-typed (``chip.launch.graph_cycles``, ``chip.dram.bytes_per_cycle``,
``chip.sram.capacity_bytes``, ``chip.tensor_flops_per_cycle``, ``chip.tensor_core.tile``,
``chip.simd.lanes``; see :data:`CHIP_FIELDS`), so this
module needs nothing from :mod:`chipsim.hw`. It is an estimate, meant to be checked by hand,
not the simulator: the simulator's timing is the truth. What it leaves out most is *where*
the memory plan puts each activation (SRAM arena or DRAM depends on what else is live), the
fixed cost of each DMA and instruction per row tile, and that launches queue ahead on the
host (a long kernel hides the next one's launch). A more detailed model of the code
generator's tiles was tried and predicted whole partitions *worse* (right on single kernels
in isolation, wrong about placement), so the estimate stays this simple.

Example:
    >>> from types import SimpleNamespace as NS
    >>> from chipsim.ir import GraphBuilder, f32
    >>> chip = NS(launch=NS(graph_cycles=200), dram=NS(bytes_per_cycle=16),
    ...           sram=NS(capacity_bytes=2**19), simd=NS(lanes=8), tensor_flops_per_cycle=128)
    >>> b = GraphBuilder()
    >>> x = b.input((64, 64), f32)
    >>> g = b.build(b.op("relu", b.op("neg", x)))
    >>> kernel_cycles(g, [0], chip)  # launch + 4096 elements / 8 lanes (x stays in SRAM)
    712
    >>> kernel_cycles(g, [1], chip)  # launch + 16 KiB graph output to DRAM / 16 B per cycle
    1224
    >>> kernel_cycles(g, [0, 1], chip)  # one launch saved; DMA hides the compute
    1224
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chipsim.ir.graph import Graph, Node
from chipsim.ir.ops import check_attrs, get_op
from chipsim.ir.ops.tiling import row_tiling
from chipsim.passes.fusion.boundary import kernel_boundary
from chipsim.passes.fusion.partition import group_outputs
from chipsim.target import Chip

#: Every function here is the reference solution of an exercise (chipsim.reference).
__reference_for__ = ("fusion",)


def on_chip_limit(chip: Chip) -> int:
    """Largest tensor assumed to stay in SRAM between two kernels (a sixteenth of SRAM).

    The compiler's placement keeps activations passed between kernels in an SRAM arena (half
    of SRAM), but every live activation shares it and the graph inputs take their slots
    first, so only tensors well below the arena's size reliably stay on chip. Calibrated on
    the fusion-quality benchmark (edge-npu): limits of 1/4, 1/8, 1/16, 1/32 and 1/64 of SRAM
    put the pass within 5 % of the best on 77, 79, 81, 82 and 79 of 100 graphs.
    """
    return chip.sram.capacity_bytes // 16


def kernel_budget(chip: Chip) -> int:
    """SRAM bytes a kernel's tiles may use: what the activation arena (half of SRAM) leaves."""
    return chip.sram.capacity_bytes // 2


def _dram_traffic(graph: Graph, group: Sequence[int], chip: Chip) -> tuple[int, int]:
    """(DRAM bytes in and out of the kernel, bytes of values that stay inside it).

    Weights are read from DRAM and graph outputs written to DRAM; activations passed from or
    to other kernels stay on chip unless they are too big (:func:`on_chip_limit`).
    """
    edge = kernel_boundary(graph, group)
    index = {n.output: i for i, n in enumerate(graph.nodes)}
    outputs = set(graph.outputs)
    limit = on_chip_limit(chip)
    total = 0
    for v in edge.reads:
        p = index.get(v)
        weight = p is not None and graph.nodes[p].is_constant
        if (weight and v.type.numel > 1) or v.type.nbytes > limit:
            total += v.type.nbytes
    for v in edge.writes:
        if v in outputs or v.type.nbytes > limit:
            total += v.type.nbytes
    inner = sum(v.type.nbytes for v in edge.inner)
    return total, inner


def mixes_rows(graph: Graph, i: int) -> bool:
    """Whether node ``i`` needs rows other than its own, so the kernel cannot stream rows:
    the op's own row rule (:attr:`~chipsim.ir.ops.OpDef.rows`), which the code generator
    tiles by."""
    node = graph.nodes[i]
    return get_op(node.op).row_inputs([v.type for v in node.inputs], node.type, node.attrs) is None


def streams_rows(graph: Graph, group: Sequence[int]) -> bool:
    """Whether the kernel of ``group`` (node indices) is cut into row tiles, so DMA overlaps
    compute: the same composition of the ops' row rules the code generator tiles by
    (:func:`~chipsim.ir.ops.tiling.row_tiling`)."""
    nodes = [graph.nodes[i] for i in sorted(group)]
    return row_tiling(nodes, group_outputs(graph, group)) is not None


def _tensor_flops(node: Node, chip: Chip) -> int:
    """FLOPs a contraction costs the tensor core: its sides round up to whole tiles (a
    ``[256, 1] @ [1, 256]`` outer product still pays for ``k = 4`` on a 4x4x4 core)."""
    opdef = get_op(node.op)
    attrs = check_attrs(opdef, node.attrs)
    c = opdef.contraction([v.type for v in node.inputs], node.type, attrs)
    tm, tn, tk = chip.tensor_core.tile
    return 2 * c.batch * -(-c.m // tm) * tm * -(-c.n // tn) * tn * -(-c.k // tk) * tk


@dataclass(frozen=True, slots=True)
class KernelEstimate:
    """The estimated time of one kernel, split by what it keeps busy (cycles)."""

    tensor: float  # tensor core
    vector: float  # SIMD unit
    dram: float  # DMA to and from DRAM
    streams: bool  # tiled over rows, so DMA overlaps compute

    @property
    def body(self) -> float:
        """Cycles from the kernel's first instruction to its last (launch not included)."""
        compute = self.tensor + self.vector
        return max(compute, self.dram) if self.streams else compute + self.dram


def estimate_kernel(graph: Graph, group: Sequence[int], chip: Chip) -> KernelEstimate:
    """The :class:`KernelEstimate` of ``group`` (node indices) on ``chip``."""
    tensor_work = vector_work = 0
    for i in group:
        node = graph.nodes[i]
        opdef = get_op(node.op)
        if opdef.contraction is not None:
            tensor_work += _tensor_flops(node, chip)
        else:
            elements = opdef.vector_elements([v.type for v in node.inputs], node.type)
            vector_work += elements * opdef.vector_slots
    dram_bytes, inner = _dram_traffic(graph, group, chip)
    streams = streams_rows(graph, group)
    if not streams and dram_bytes + inner > chip.sram.capacity_bytes:
        dram_bytes += 2 * inner  # spilled: intermediates go to DRAM and come back
    return KernelEstimate(
        tensor_work / chip.tensor_flops_per_cycle,
        vector_work / chip.simd.lanes,
        dram_bytes / chip.dram.bytes_per_cycle,
        streams,
    )


def kernel_cycles(graph: Graph, group: Sequence[int], chip: Chip) -> int:
    """Estimated cycles of one kernel running ``group`` (node indices) on ``chip``, alone.

    Launch plus body; see the module docstring for the formula and what it leaves out.
    """
    return chip.launch.graph_cycles + round(estimate_kernel(graph, group, chip).body)


#: The chip fields the estimate reads, as attribute paths.
CHIP_FIELDS = (
    "launch.graph_cycles",
    "dram.bytes_per_cycle",
    "sram.capacity_bytes",
    "simd.lanes",
    "tensor_core.tile",
    "tensor_flops_per_cycle",
)


def can_estimate(chip: Chip) -> bool:
    """Whether ``chip`` has every field in :data:`CHIP_FIELDS` (a stub with only SRAM has not)."""
    for path in CHIP_FIELDS:
        obj = chip
        for name in path.split("."):
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
    return True
