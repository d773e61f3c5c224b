"""``make chapter`` renders one chapter as the book does (no raw MyST, no notebook warnings)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = "book/pitfalls"  # glued numbers, glossary terms and admonitions


@pytest.mark.book
def test_make_chapter_renders_like_the_book(tmp_path):
    out = tmp_path / "chapter"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "book" / "_ext" / "chapter.py"), f"{PAGE}.md", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 0, printed
    assert "0 warning(s) in book/pitfalls.md" in printed
    assert "the other pages there have no outputs" in printed  # a learner opened one
    for noise in ("trust", "papermill", "without encryption"):
        assert noise not in printed.lower()
    html = (out / "_build" / "html" / f"{PAGE}.html").read_text(encoding="utf-8")
    assert "cell_output" in html  # the chapter ran
    raw = re.findall(r"\{glue:?[a-z]*\}|\{term\}|:::\{[a-z]+\}|\{doc\}", html)
    assert not raw, raw
    assert 'href="glossary.html#term' in html  # glossary terms link, as in the book
