"""The description of a simulated chip: a :class:`Chip`, read from a file or a preset.

A :class:`Chip` says how fast each execution unit is, how big and fast each memory is,
what a kernel launch costs and how much energy each action takes. It never says what an op
*means*: changing a chip changes times, never results. It is a frozen composition of small
dataclasses, one per part (:mod:`chipsim.hw.parts`); this module holds the whole chip, its
checked loading from TOML/JSON and the presets (:func:`get_chip`, :func:`list_chips`).

Presets live as TOML files in ``chipsim/hw/presets/``; every figure there names its source.

Example:
    >>> from chipsim.hw import get_chip
    >>> npu = get_chip("edge-npu")
    >>> npu.simd.lanes, npu.tensor_core.tile
    (8, (4, 4, 4))
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chipsim.errors import ChipConfigError
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
    SMs,
    TensorCore,
)
from chipsim.i18n import tr

PRESET_DIR = Path(__file__).parent / "presets"
#: Element types a chip description may name (the ISA's storage formats).
DTYPE_NAMES = ("f32", "f16", "bf16", "i8", "i32", "i64", "bool", "u8")


_PARTS = {
    "alu": ALU,
    "mac": MACArray,
    "simd": SIMD,
    "tensor_core": TensorCore,
    "dma": DMA,
    "dram": DRAM,
    "sram": SRAM,
    "l2": L2,
    "registers": Registers,
    "sm": SMs,
    "launch": Launch,
    "energy": Energy,
}


@dataclass(frozen=True, slots=True)
class Chip:
    """A whole chip: clock, execution units, memories, launch costs and energy table."""

    name: str = "edge-npu"
    clock_hz: int = 1_000_000_000
    description: str = ""
    alu: ALU = field(default_factory=ALU)
    mac: MACArray = field(default_factory=MACArray)
    simd: SIMD = field(default_factory=SIMD)
    tensor_core: TensorCore = field(default_factory=TensorCore)
    dma: DMA = field(default_factory=DMA)
    dram: DRAM = field(default_factory=DRAM)
    sram: SRAM = field(default_factory=SRAM)
    l2: L2 = field(default_factory=L2)
    registers: Registers = field(default_factory=Registers)
    sm: SMs = field(default_factory=SMs)
    launch: Launch = field(default_factory=Launch)
    energy: Energy = field(default_factory=Energy)

    # -- unit selection --------------------------------------------------------------------
    def contraction_unit(self, dtype: str) -> str:
        """The unit a contraction (matmul, conv) of ``dtype`` elements runs on.

        ``"tensor"`` when the tensor core takes the dtype (see :attr:`TensorCore.dtypes`),
        otherwise ``"mac"``: the MAC array (integers, and on a GPU full-precision f32 on the
        CUDA cores).

        Example:
            >>> gpu = get_chip("datacenter-gpu")
            >>> gpu.contraction_unit("bf16"), gpu.contraction_unit("f32")
            ('tensor', 'mac')
            >>> gpu.with_tf32().contraction_unit("f32")
            'tensor'
        """
        return "tensor" if self.tensor_core.takes(dtype) else "mac"

    def with_tf32(self, enabled: bool = True) -> Chip:
        """A copy whose f32 contractions use the tensor core's TF32 mode (if it has one).

        Raises:
            ChipConfigError: the chip's tensor core has no TF32 mode.
        """
        if enabled and self.tensor_core.tf32_cycles_per_tile == 0:
            raise ChipConfigError(
                f"chip {self.name!r}: its tensor core has no TF32 mode "
                f"(tensor_core.tf32_cycles_per_tile is 0)"
            )
        tc = dataclasses.replace(self.tensor_core, allow_tf32=enabled)
        return dataclasses.replace(self, tensor_core=tc)

    # -- derived peaks (per cycle and per second) -----------------------------------------
    @property
    def tensor_flops_per_cycle(self) -> int:
        m, n, k = self.tensor_core.tile
        return 2 * m * n * k * self.tensor_core.count // self.tensor_core.cycles_per_tile

    @property
    def vector_flops_per_cycle(self) -> int:
        """Peak of the SIMD units, counting a fused multiply-add as two FLOPs."""
        return 2 * self.simd.lanes * self.simd.count

    @property
    def peak_flops(self) -> float:
        """The chip's highest FLOP/s (its tensor core, or its vector units if faster)."""
        return max(self.tensor_flops_per_cycle, self.vector_flops_per_cycle) * self.clock_hz

    @property
    def dram_bandwidth(self) -> float:
        """DRAM bytes per second."""
        return self.dram.bytes_per_cycle * self.clock_hz

    def seconds(self, cycles: int) -> float:
        return cycles / self.clock_hz

    def cycles(self, seconds: float) -> int:
        return math.ceil(seconds * self.clock_hz)

    def __str__(self) -> str:
        t = self.tensor_flops_per_cycle * self.clock_hz / 1e12
        v = self.vector_flops_per_cycle * self.clock_hz / 1e12
        return tr(
            "{name}: {ghz:g} GHz, tensor {tensor:.3g} TFLOP/s, vector {vector:.3g} TFLOP/s, "
            "DRAM {gbs:.4g} GB/s ({dram}), SRAM {sram}, eager launch {launch:.3g} us",
            name=self.name,
            ghz=self.clock_hz / 1e9,
            tensor=t,
            vector=v,
            gbs=self.dram_bandwidth / 1e9,
            dram=_size(self.dram.capacity_bytes),
            sram=_size(self.sram.capacity_bytes),
            launch=self.launch.eager_cycles / self.clock_hz * 1e6,
        )

    # -- loading ---------------------------------------------------------------------------
    @staticmethod
    def from_dict(data: dict[str, Any], source: str = "<dict>") -> Chip:
        """Build a chip from nested dicts (as read from TOML/JSON), checking every field."""
        if not isinstance(data, dict):
            raise ChipConfigError(f"{source}: expected a table of chip fields")
        top: dict[str, Any] = {}
        for key, value in data.items():
            if key in _PARTS:
                top[key] = _build_part(key, _PARTS[key], value, source)
            elif key in ("name", "description"):
                if not isinstance(value, str):
                    raise ChipConfigError(f"{source}: {key}: expected a string, got {value!r}")
                top[key] = value
            elif key == "clock_hz":
                top[key] = _positive_int("clock_hz", value, source)
            else:
                known = ", ".join(["name", "clock_hz", "description", *_PARTS])
                raise ChipConfigError(f"{source}: unknown field {key!r}; known fields: {known}")
        l2 = top.get("l2")
        if l2 is not None and l2.present and l2.bytes_per_cycle == 0:
            raise ChipConfigError(
                f"{source}: l2.bytes_per_cycle: a chip with an L2 cache (l2.capacity_bytes > 0) "
                f"needs its bandwidth, a positive int; or set l2.capacity_bytes = 0 for no cache"
            )
        return Chip(**top)

    @staticmethod
    def from_file(path: str | Path) -> Chip:
        """Load a chip from a TOML or JSON file (see ``chipsim/hw/presets/`` for examples)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ChipConfigError(f"cannot read chip file {path}: {exc}") from None
        if path.suffix == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ChipConfigError(f"{path}: invalid JSON: {exc}") from None
        else:
            data = _load_toml(text, str(path))
        return Chip.from_dict(data, str(path))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n} B"


def _positive_int(name: str, value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ChipConfigError(f"{source}: {name}: expected a positive int, got {value!r}")
    return value


def _build_part(section: str, cls: type, values: Any, source: str) -> Any:
    if not isinstance(values, dict):
        raise ChipConfigError(f"{source}: {section}: expected a table, got {values!r}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        where = f"{section}.{key}"
        if key not in names:
            raise ChipConfigError(f"{source}: unknown field {where!r}; known: {', '.join(names)}")
        default = names[key].default
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ChipConfigError(f"{source}: {where}: expected true or false, got {value!r}")
        elif isinstance(default, tuple) and default and isinstance(default[0], str):
            if not isinstance(value, (list, tuple)) or any(v not in DTYPE_NAMES for v in value):
                raise ChipConfigError(
                    f"{source}: {where}: expected a list of dtype names "
                    f"({', '.join(DTYPE_NAMES)}), got {value!r}"
                )
            value = tuple(value)
        elif isinstance(default, int) and default == 0:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ChipConfigError(f"{source}: {where}: expected an int >= 0, got {value!r}")
        elif isinstance(default, str):
            if not isinstance(value, str):
                raise ChipConfigError(f"{source}: {where}: expected a string, got {value!r}")
        elif isinstance(default, tuple):
            if not isinstance(value, (list, tuple)) or len(value) != len(default):
                raise ChipConfigError(
                    f"{source}: {where}: expected {len(default)} positive ints, got {value!r}"
                )
            value = tuple(_positive_int(where, v, source) for v in value)
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ChipConfigError(f"{source}: {where}: expected a number >= 0, got {value!r}")
            value = float(value)
        else:
            value = _positive_int(where, value, source)
        kwargs[key] = value
    return cls(**kwargs)


def _load_toml(text: str, source: str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: a tiny parser for the subset the presets use
        return _mini_toml(text, source)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ChipConfigError(f"{source}: invalid TOML: {exc}") from None


def _mini_toml(text: str, source: str) -> dict[str, Any]:
    """Parse ``[section]`` headers and ``key = value`` lines (numbers, strings, int arrays)."""
    data: dict[str, Any] = {}
    table = data
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            table = data.setdefault(line[1 : line.index("]")].strip(), {})
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ChipConfigError(f"{source}:{lineno}: expected 'key = value', got {raw!r}")
        value = value.strip()
        if value.startswith('"'):
            table[key.strip()] = value[1 : value.index('"', 1)]
        else:
            table[key.strip()] = json.loads(value.split("#", 1)[0].replace("_", ""))
    return data


def list_chips() -> list[str]:
    """Names of the preset chips, sorted."""
    return sorted(p.stem for p in PRESET_DIR.glob("*.toml"))


# The chip last read from each file, with the file's modification time and size: compiling by
# a chip's name reads its file once (reading it took 6% of a fusion search that compiles by
# name), and a file written since (``python -m chipsim calibrate``) is read again. Chips are
# immutable, so callers share them.
_READ: dict[str, tuple[int, int, Chip]] = {}


def _read(path: Path) -> Chip:
    stat, where = path.stat(), str(path.resolve())
    held = _READ.get(where)
    if held is None or held[:2] != (stat.st_mtime_ns, stat.st_size):
        held = _READ[where] = (stat.st_mtime_ns, stat.st_size, Chip.from_file(path))
    return held[2]


def get_chip(name: str | Chip) -> Chip:
    """A preset chip by name (``"edge-npu"``, ``"datacenter-gpu"``, ``"cpu-simd"``), or a path.

    Example:
        >>> get_chip("datacenter-gpu").simd.lanes
        32
    """
    if isinstance(name, Chip):
        return name
    path = PRESET_DIR / f"{name}.toml"
    if path.exists():
        return _read(path)
    if Path(name).suffix in (".toml", ".json") and Path(name).exists():
        return _read(Path(name))
    raise ChipConfigError(
        f"unknown chip {name!r}; presets: {', '.join(list_chips())} "
        f"(or give the path of a .toml/.json chip file)"
    )
