"""Where the user's code is: the file and line an op was called from, for nodes and errors."""

from __future__ import annotations

import os
import re
import sys

from chipsim.i18n import tr

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame() -> tuple[str, int]:
    """(file name, line) of the innermost caller outside the chipsim package."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "", 0


def format_location(filename: str, line: int) -> str:
    """``file.py:12``; a Jupyter cell (a temporary ``ipykernel_*`` file) reads ``cell, line 12``."""
    if not filename:
        return ""
    if re.search(r"ipykernel_\d+", filename):
        return tr("notebook cell, line {line}", line=line)
    return f"{filename}:{line}"


def user_location() -> str:
    """Where the user's code is: ``file.py:LINE`` (or ``notebook cell, line N``)."""
    return format_location(*user_frame())
