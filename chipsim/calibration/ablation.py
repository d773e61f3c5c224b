"""The parts of the GPU model, and what taking each one out costs in accuracy.

:data:`ABLATIONS` maps a part's name to the chip fields that switch it off (a function of
the chip, so the switched-off value can depend on its other fields). The book's accuracy
page and ``benchmarks/calibration.py`` evaluate the preset with each part taken out, so every
part of the model is shown to pay its way on the published measurements.

:data:`GPU_FIT_PARAMS` are the eight fields fitted to the fit rows (the L2's sustained
bandwidth is one field with the SMs' load path that crosses it), :data:`GPU_PRIORS` where the
fit starts (published figures, not the answer), :data:`ROW_BUDGETS` the per-block row budgets
tried.

Example:
    >>> import chipsim
    >>> gpu = chipsim.chip("datacenter-gpu")
    >>> ABLATIONS["no per-block row budget (long rows in one pass)"](gpu)
    {'sm.row_budget_bytes': 0}
"""

from __future__ import annotations

from collections.abc import Callable

import chipsim
from chipsim.calibration.fit import Param
from chipsim.i18n import N_

Fields = dict[str, object]

GPU_FIT_PARAMS = (
    Param(("launch.eager_cycles",), 1_000, 200_000),
    Param(("launch.library_cycles",), 1_000, 200_000),
    Param(("launch.compiled_cycles",), 1_000, 200_000),
    Param(("launch.compiled_overlap_cycles",), 1_000, 200_000),
    Param(("tensor_core.sustained_pct",), 50, 100),
    Param(("dram.sustained_pct",), 50, 100),
    Param(("l2.bytes_per_cycle", "dma.bytes_per_cycle"), 500, 20_000),
    Param(("dma.setup_cycles",), 1, 5_000),
)

#: Where the fit starts, at 1.41 GHz: LLMCompass's fitted A100 overheads (hardware_model/
#: compute_module.py: softmax 12 us, matmul 21 us, layernorm and GELU 45 us), half of a
#: compiled call beside its kernel (no published split; from no overlap at all the fit stops
#: in a local minimum, see benchmarks/README.md), datasheet peak rates (the L2's peak read
#: bandwidth, 5120 bytes/clk, from the whitepaper), 0.5 us to start a DMA transfer.
GPU_PRIORS: Fields = {
    "launch.eager_cycles": 16_920,
    "launch.library_cycles": 29_610,
    "launch.compiled_cycles": 63_450,
    "launch.compiled_overlap_cycles": 31_725,
    "tensor_core.sustained_pct": 100,
    "dram.sustained_pct": 100,
    "l2.bytes_per_cycle": 5120,
    "dma.bytes_per_cycle": 5120,
    "dma.setup_cycles": 700,
}

ROW_BUDGETS = (4096, 16384, 65536)


def _one_dispatch(chip: chipsim.Chip) -> Fields:
    """Every call pays the same host cost: the mean of the three kinds."""
    la = chip.launch
    mean = (la.eager_cycles + la.library + la.compiled) // 3
    return {
        "launch.eager_cycles": mean,
        "launch.library_cycles": mean,
        "launch.compiled_cycles": mean,
    }


ABLATIONS: dict[str, Callable[[chipsim.Chip], Fields]] = {
    N_("one host dispatch cost for every kind of call"): _one_dispatch,
    N_("no host work beside the kernel (no overlap)"): lambda c: {
        "launch.compiled_overlap_cycles": 0
    },
    N_("no device launch latency or sync cost"): lambda c: {
        "launch.device_cycles": 0,
        "launch.sync_cycles": 0,
    },
    N_("tensor cores at peak (no sustained rate)"): lambda c: {"tensor_core.sustained_pct": 100},
    N_("no per-block row budget (long rows in one pass)"): lambda c: {"sm.row_budget_bytes": 0},
    N_("one block size, no operand loads per block (the waves alone)"): lambda c: {
        "sm.operand_bytes_per_cycle": 0
    },
    N_("no waves (a contraction's blocks spread evenly over the SMs)"): lambda c: {
        "sm.block_rows": 0,
        "sm.block_cols": 0,
    },
    N_("no L2 cache (every DRAM byte at DRAM speed)"): lambda c: {"l2.capacity_bytes": 0},
}
