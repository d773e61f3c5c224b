"""The hardware model: chip descriptions, the ISA and its costs, memories, the simulator and
the caching allocator used by eager mode. It knows nothing of graphs (numpy only)."""

from chipsim.hw.cache import L2Cache
from chipsim.hw.chip import Chip, get_chip, list_chips
from chipsim.hw.host import HostProfile, get_host, list_hosts
from chipsim.hw.isa import (
    OPCODES,
    STORAGE,
    UNITS,
    Instr,
    Operand,
    cost,
    mma_ops,
    simd_ops,
    wave_share,
)
from chipsim.hw.memory import Memory
from chipsim.hw.parts import (
    ALU,
    DMA,
    DRAM,
    L2,
    SIMD,
    SRAM,
    Energy,
    Launch,
    MACArray,
    Registers,
    TensorCore,
)
from chipsim.hw.simulator import AccessMap, Record, Simulator

__all__ = [
    "ALU",
    "DMA",
    "DRAM",
    "L2",
    "SIMD",
    "SRAM",
    "Chip",
    "Energy",
    "Launch",
    "MACArray",
    "Registers",
    "TensorCore",
    "get_chip",
    "HostProfile",
    "get_host",
    "list_hosts",
    "list_chips",
    "OPCODES",
    "STORAGE",
    "UNITS",
    "Instr",
    "Operand",
    "cost",
    "mma_ops",
    "wave_share",
    "simd_ops",
    "Memory",
    "L2Cache",
    "AccessMap",
    "Record",
    "Simulator",
]
