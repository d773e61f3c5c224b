"""Running things on the simulated chip: the program (an instruction list), the eager device
and the cost report."""

from chipsim.runtime.device import ChipBuffer, ChipDevice, make_device
from chipsim.runtime.program import Program
from chipsim.runtime.report import KernelSpan, KernelStat, Report, roofline_cycles

__all__ = [
    "ChipBuffer",
    "ChipDevice",
    "make_device",
    "Program",
    "KernelSpan",
    "KernelStat",
    "Report",
    "roofline_cycles",
]
