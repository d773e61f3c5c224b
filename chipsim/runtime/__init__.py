"""Running things on the simulated chip: the eager device and the cost report."""

from chipsim.runtime.device import ChipBuffer, ChipDevice, make_device
from chipsim.runtime.report import KernelSpan, KernelStat, Report, roofline_cycles

__all__ = [
    "ChipBuffer",
    "ChipDevice",
    "make_device",
    "KernelSpan",
    "KernelStat",
    "Report",
    "roofline_cycles",
]
