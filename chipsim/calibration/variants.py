"""The A100 variants the published rows ran on, and the chip each one is.

``datacenter-gpu`` is an A100-SXM4-80GB. The sources also timed a PCIe card with 80 GB, and
Triton's CI an A100 with 40 GB whose clocks it locks at 1350 MHz (SM) and 1215 MHz (memory).
The variants differ in two numbers that per-op times feel: the SM clock a kernel runs at
(every SM-side rate -- tensor cores, CUDA cores, L2, shared memory -- scales with it) and the
HBM bandwidth. :func:`with_variant` makes the chip of a variant from the preset: the clock
changes with every per-cycle rate kept (so rates per second scale with the clock), the HBM's
bytes per cycle are set from the datasheet's bandwidth, and everything timed in seconds (host
costs, DRAM latency) keeps its seconds.

Sources: NVIDIA A100 Tensor Core GPU datasheet (2021): 40GB PCIe/SXM 1,555 GB/s; 80GB PCIe
1,935 GB/s; 80GB SXM 2,039 GB/s; 1,410 MHz boost for all. Triton's CI clocks: triton
python/test/regression/test_performance.py (sm_clocks, mem_clocks) and get_dram_gbps
(1215 MHz x 5120-bit bus x 2 / 8 = 1,555 GB/s).

Example:
    >>> import chipsim
    >>> ci = with_variant(chipsim.chip("datacenter-gpu"), "A100-40GB@1350MHz")
    >>> ci.clock_hz, round(ci.dram_bandwidth / 1e9)
    (1350000000, 1555)
"""

from __future__ import annotations

from dataclasses import dataclass

import chipsim


@dataclass(frozen=True, slots=True)
class Variant:
    """An A100 as a source ran it: SM clock (Hz) and HBM bandwidth (bytes/s)."""

    clock_hz: int
    dram_bytes_per_s: float
    note: str


VARIANTS: dict[str, Variant] = {
    "A100-SXM4-80GB": Variant(1_410_000_000, 2039e9, "the preset: datasheet boost clock, HBM2e"),
    "A100-PCIe-80GB": Variant(1_410_000_000, 1935e9, "datasheet: 1,935 GB/s, 300 W"),
    "A100-SXM4-40GB": Variant(1_410_000_000, 1555e9, "datasheet: 1,555 GB/s HBM2"),
    "A100-PCIe-40GB": Variant(1_410_000_000, 1555e9, "datasheet: 1,555 GB/s HBM2, 250 W"),
    "A100-40GB@1350MHz": Variant(1_350_000_000, 1555.2e6 * 1000, "Triton CI: clocks locked"),
    # Not stated by the source. The sources that leave it out are dated 2020-2022 and say "A100"
    # or "GA100"; the 40 GB card is the A100 as launched (May 2020) and the only one until the
    # 80 GB cards shipped in 2021, so it is assumed (a choice, said so wherever it matters).
    "A100-unstated": Variant(1_410_000_000, 1555e9, "not stated: the launch-era 40 GB card"),
}

#: Per-cycle rates kept (per-second rates scale with the clock) and cycle counts of host or
#: DRAM time (their seconds kept).
_SECONDS_FIELDS = (
    "launch.eager_cycles",
    "launch.library_cycles",
    "launch.compiled_cycles",
    "launch.compiled_overlap_cycles",
    "launch.overlap_cycles",
    "launch.graph_cycles",
    "launch.device_cycles",
    "launch.sync_cycles",
    "launch.kernel_gap_cycles",
    "dram.latency_cycles",
)


def with_variant(chip: chipsim.Chip, name: str) -> chipsim.Chip:
    """``chip`` (an A100 preset) as variant ``name`` (see :data:`VARIANTS`)."""
    try:
        v = VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown GPU variant {name!r}; known: {', '.join(VARIANTS)}") from None
    if v.clock_hz == chip.clock_hz and round(v.dram_bytes_per_s / chip.clock_hz) == (
        chip.dram.bytes_per_cycle
    ):
        return chip
    scale = v.clock_hz / chip.clock_hz
    data = chip.to_dict()
    data["clock_hz"] = v.clock_hz
    for path in _SECONDS_FIELDS:
        section, key = path.split(".")
        data[section][key] = round(data[section][key] * scale)
    data["dram"]["bytes_per_cycle"] = max(1, round(v.dram_bytes_per_s / v.clock_hz))
    return chipsim.Chip.from_dict(data, f"{chip.name} as {name}")
