"""The course's kernels start quietly: no "running over TCP without encryption" per chapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[2]


def test_the_venv_carries_the_course_kernel_config():
    installed = Path(sys.prefix) / "etc" / "ipython" / "ipython_kernel_config.py"
    source = ROOT / "config" / "ipython_kernel_config.py"
    assert installed.read_text() == source.read_text(), "run `make setup`"


def test_a_kernel_started_from_the_venv_prints_no_tcp_warning(tmp_path):
    km = KernelManager(kernel_name="python3")
    err = tmp_path / "kernel.err"
    with err.open("w") as stderr:
        km.start_kernel(stderr=stderr, stdout=subprocess.DEVNULL)
        try:
            client = km.client()
            client.start_channels()
            client.wait_for_ready(timeout=60)
            client.execute_interactive("import warnings; print('ready')", timeout=60)
            client.stop_channels()
        finally:
            km.shutdown_kernel(now=True)
    text = err.read_text()
    assert "without encryption" not in text, text
