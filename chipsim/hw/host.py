"""The host that drives a chip: what it costs to dispatch a call and to wait for the chip.

A GPU's per-op time for a small op is mostly the *host's*: Python, the framework's dispatcher
and the driver, before and after the kernel. Those costs belong to the machine the GPU sits in,
not to the GPU, so they are a part of their own: a :class:`HostProfile`, in microseconds, with
presets in ``chipsim/hw/hosts/`` (hosts whose costs were measured from published timings) and
``python -m chipsim calibrate`` writing one for the learner's machine.

:meth:`HostProfile.apply` puts a profile's costs into a chip's :class:`~chipsim.hw.parts.Launch`
table (cycles at the chip's clock). The kinds of call are opcodes of the ISA, never op names:

* ``framework_us``: a framework's own kernel (PyTorch's ATen dispatcher), opcode ``launch``;
* ``library_us``: a call into the vendor's library (cuBLAS), opcode ``launch_library``;
* ``wrapper_us``: a call through a Python-level wrapper before the launch (a ``torch.compile``'d
  function, an autograd extension, a Triton launcher), of which ``wrapper_overlap_us`` runs
  after the launch, beside the kernel;
* ``sync_us``: the host noticing that the chip is done (``synchronize``, ``download``).

The chip keeps its own ``launch.device_cycles`` (driver and GPU: from a launch to the kernel
running) and ``graph_cycles`` (the next kernel of a compiled program).

Example:
    >>> from chipsim.hw import get_chip
    >>> host = get_host("llmcompass-host")
    >>> gpu = host.apply(get_chip("datacenter-gpu"))
    >>> round(gpu.launch.eager_cycles / gpu.clock_hz * 1e6, 2) == host.framework_us
    True
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chipsim.errors import ChipConfigError
from chipsim.hw.chip import Chip, _load_toml

HOST_DIR = Path(__file__).parent / "hosts"

#: Profile field -> the Launch field it sets.
_LAUNCH_FIELDS = {
    "framework_us": "eager_cycles",
    "library_us": "library_cycles",
    "wrapper_us": "compiled_cycles",
    "wrapper_overlap_us": "compiled_overlap_cycles",
    "sync_us": "sync_cycles",
}


@dataclass(frozen=True, slots=True)
class HostProfile:
    """A host's costs per call, in microseconds (see the module doc)."""

    name: str
    description: str = ""
    framework_us: float = 10.0
    library_us: float = 20.0
    wrapper_us: float = 40.0
    wrapper_overlap_us: float = 20.0
    sync_us: float = 1.0

    def __post_init__(self) -> None:
        for f in _LAUNCH_FIELDS:
            value = getattr(self, f)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ChipConfigError(
                    f"host {self.name!r}: {f} must be a number >= 0, got {value!r}"
                )
        if self.wrapper_overlap_us > self.wrapper_us:
            raise ChipConfigError(
                f"host {self.name!r}: wrapper_overlap_us ({self.wrapper_overlap_us}) cannot exceed "
                f"wrapper_us ({self.wrapper_us}): it is the part of the call after the launch"
            )

    def cycles(self, chip: Chip) -> dict[str, int]:
        """The Launch fields of ``chip`` this host sets, in cycles of the chip's clock."""
        return {
            target: max(0, round(getattr(self, f) * 1e-6 * chip.clock_hz))
            for f, target in _LAUNCH_FIELDS.items()
        }

    def apply(self, chip: Chip) -> Chip:
        """``chip`` driven from this host: its launch table with this host's costs."""
        launch = dataclasses.replace(chip.launch, **self.cycles(chip))
        return dataclasses.replace(chip, launch=launch)

    @staticmethod
    def of(chip: Chip, name: str = "", description: str = "") -> HostProfile:
        """The host a chip's launch table describes (the inverse of :meth:`apply`)."""
        us = {
            f: round(getattr(chip.launch, target) / chip.clock_hz * 1e6, 2)
            for f, target in _LAUNCH_FIELDS.items()
        }
        return HostProfile(name or f"host of {chip.name}", description, **us)

    def to_toml(self, header: str = "") -> str:
        lines = [f"# {h}" for h in header.splitlines()]
        for f in dataclasses.fields(self):
            lines.append(f"{f.name} = {json.dumps(getattr(self, f.name), ensure_ascii=False)}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def from_dict(data: dict[str, Any], source: str = "<dict>") -> HostProfile:
        names = {f.name for f in dataclasses.fields(HostProfile)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ChipConfigError(
                f"{source}: unknown host field(s) {', '.join(unknown)}; known: {', '.join(names)}"
            )
        if "name" not in data:
            raise ChipConfigError(f"{source}: a host profile needs a name")
        return HostProfile(**data)


def list_hosts() -> list[str]:
    """Names of the preset hosts, sorted."""
    return sorted(p.stem for p in HOST_DIR.glob("*.toml"))


def get_host(name: str | HostProfile) -> HostProfile:
    """A preset host by name, or a host TOML file by path."""
    if isinstance(name, HostProfile):
        return name
    path = HOST_DIR / f"{name}.toml"
    if not path.exists():
        path = Path(name)
        if path.suffix != ".toml" or not path.exists():
            raise ChipConfigError(
                f"unknown host {name!r}; presets: {', '.join(list_hosts())} "
                f"(or give the path of a host .toml file)"
            )
    return HostProfile.from_dict(_load_toml(path.read_text(encoding="utf-8"), str(path)), str(path))
