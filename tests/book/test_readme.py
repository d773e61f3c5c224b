"""The README speaks to learners too: their section's commands exist and its CLI examples run."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 3)
    return README[start : end if end > 0 else None]


def test_learners_section_has_one_command_to_grade_and_says_where_feedback_is():
    text = section("Take the course")
    assert "make grade-mine" in text and "gradebook/feedback/me/fusion/fusion.html" in text
    assert "Validate" in text and "make lab" in text and "never writes your notebooks" in text
    dry = subprocess.run(["make", "-n", "grade-mine"], cwd=ROOT, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "grader.cli mine" in dry.stdout
    # the command the target runs exists and says what it does (the journey test runs it)
    usage = subprocess.run([sys.executable, "-m", "grader.cli", "mine", "--help"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert usage.returncode == 0 and "--me" in usage.stdout, usage.stderr


def test_plan_memory_examples_run(tmp_path):
    text = section("The command line")
    (tmp_path / "buffers.csv").write_text("\ufeffid,lower,upper,size\r\na,0,3,100\r\nb,3,5,64\r\n")
    commands = re.findall(r"^python -m chipsim plan-memory [^#\n]*", text, flags=re.M)
    assert len(commands) == 3 and "half-open `[lower, upper)`" in text
    for command in commands:
        args, _, redirect = command.strip().partition(">")
        argv = [sys.executable, *shlex.split(args)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
        if redirect:
            (tmp_path / redirect.strip()).write_text(done.stdout)
    assert (tmp_path / "plan.csv").read_text().startswith("id,lower,upper,size,offset")
