"""Write a :class:`~chipsim.Chip` as a TOML file that ``chipsim.chip(path)`` loads back.

The layout follows the presets in ``chipsim/hw/presets/``: top-level fields, then one table
per part, every value on its own line with an optional comment saying where it came from.

Example:
    >>> import chipsim, tempfile, pathlib
    >>> npu = chipsim.chip("edge-npu")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "npu.toml"
    >>> _ = path.write_text(chip_toml(npu, {"simd.lanes": "eight additions at once"}))
    >>> chipsim.chip(str(path)) == npu
    True
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import chipsim


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v:_}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def _line(key: str, value: Any, comment: str | None) -> str:
    text = f"{key} = {_value(value)}"
    return f"{text:<36}# {comment}" if comment else text


def chip_toml(
    chip: chipsim.Chip, comments: Mapping[str, str] | None = None, header: Sequence[str] = ()
) -> str:
    """The TOML text of ``chip``; ``comments`` maps dotted fields to end-of-line notes."""
    comments = comments or {}
    lines = [f"# {h}" if h else "#" for h in header]
    tables = []
    for key, value in chip.to_dict().items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(_line(key, value, comments.get(key)))
    for name, table in tables:
        lines.append("")
        lines.append(f"[{name}]" + (f"  # {comments[name]}" if name in comments else ""))
        for key, value in table.items():
            lines.append(_line(key, value, comments.get(f"{name}.{key}")))
    return "\n".join(lines) + "\n"
