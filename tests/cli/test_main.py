"""``python -m chipsim``: one subcommand per module of chipsim.cli, help without one."""

from __future__ import annotations

import subprocess
import sys

from chipsim.cli import main


def test_without_a_subcommand_it_lists_them_and_fails(capsys):
    assert main([]) == 2
    out = capsys.readouterr().out
    assert "plan-memory" in out and "calibrate" in out


def test_the_package_runs_as_a_module():
    proc = subprocess.run(
        [sys.executable, "-m", "chipsim", "plan-memory", "--help"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "--strategy" in proc.stdout
