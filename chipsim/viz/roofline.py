"""The roofline of a chip (Williams, Waterman & Patterson, CACM 2009) with kernels on it.

Attainable FLOP/s = min(peak FLOP/s, arithmetic intensity x DRAM bandwidth). Each kernel is
a dot at (its FLOPs per DRAM byte, its achieved FLOP/s): below the roof means time lost to
launch overhead, latency or poor overlap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chipsim.drawing import drawable
from chipsim.i18n import tr
from chipsim.viz.style import UNIT_COLORS, apply_style


@drawable("roofline")
def plot_roofline(report: Any, ax: Any = None, annotate: int = 12) -> Any:
    """Draw the chip's roofs (tensor, vector, DRAM) and place each kernel; returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:  # a figure of its own takes the course style; given axes keep theirs
        apply_style()
        _, ax = plt.subplots(figsize=(7, 4.5))
    chip = report.chip
    bw = chip.dram_bandwidth
    roofs = {
        "Tensor Core": chip.tensor_flops_per_cycle * chip.clock_hz,
        "SIMD": chip.vector_flops_per_cycle * chip.clock_hz,
    }
    x = np.logspace(-3, 4, 200)
    for (name, peak), color in zip(
        roofs.items(), (UNIT_COLORS["tensor"], UNIT_COLORS["simd"]), strict=False
    ):
        ax.loglog(
            x,
            np.minimum(peak, x * bw),
            color=color,
            label=tr("{unit} roof ({tflops:.3g} TFLOP/s)", unit=tr(name), tflops=peak / 1e12),
        )
    ax.axvline(roofs["Tensor Core"] / bw, color="#999999", linestyle=":", linewidth=1)
    pts = [k for k in report.kernels if k.flops and k.dram_bytes and k.cycles]
    for k in pts:
        achieved = k.flops / (k.cycles / chip.clock_hz)
        main = "tensor" if "tensor" in k.units else k.units[0] if k.units else "simd"
        ax.loglog(
            k.flops / k.dram_bytes,
            achieved,
            "o",
            color=UNIT_COLORS.get(main, "k"),
            markersize=5,
            alpha=0.8,
        )
    for k in sorted(pts, key=lambda k: -k.cycles)[:annotate]:
        achieved = k.flops / (k.cycles / chip.clock_hz)
        ax.annotate(
            k.name,
            (k.flops / k.dram_bytes, achieved),
            fontsize=8,
            xytext=(4, 2),
            textcoords="offset points",
        )
    ax.set_xlabel(tr("arithmetic intensity (FLOP per DRAM byte)"))
    ax.set_ylabel("FLOP/s")
    ax.set_title(tr("Roofline of {chip} (DRAM {gbs:.4g} GB/s)", chip=chip.name, gbs=bw / 1e9))
    ax.legend(loc="lower right")
    return ax
