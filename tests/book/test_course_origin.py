"""The book says what it grew from (the source) and names it one way in each edition.

Pages speak of "the source" about forty times: the intro page must introduce it, the table of
contents must not promise chapters the book does not have, and the Chinese edition calls it
原讲稿 every time (locales/zh_CN/STYLE.md).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
from bookbuild import ROOT, load_catalogues  # noqa: E402

LECTURE = re.compile(r"\b[Tt]he source(?:'s)?\b(?! of)|\bsource's\b")
ZH = "原讲稿"


def test_the_intro_page_introduces_the_source_and_the_numbering():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    section = intro.split("(course-origin)=", 1)[1].split("\n## ", 2)[1]
    assert "**the source**" in section  # defined, in bold, where it is explained
    assert "chapter 4 of a Chinese course" in section
    assert "no\nchapters 1 to 3" in section or "no chapters 1 to 3" in section
    for sections in ("4.1–4.2", "4.3–4.5", "4.6–4.7", "**4.8**", "**4.9**"):
        assert sections in section


def test_the_table_of_contents_promises_no_chapters_the_book_lacks():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    captions = [part["caption"] for part in toc["parts"]]
    assert not [c for c in captions if re.search(r"\bChapter \d", c)], captions


def test_the_chinese_edition_calls_the_source_one_name():
    catalogues = load_catalogues()
    base = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
    wrong = []
    for po in sorted(base.rglob("*.po")):
        for message in catalogues.load_po(po):
            if not message.id or not message.string:
                continue
            if "原始讲稿" in message.string or "原始资料" in message.string:
                wrong.append(f"{po.name}: {message.string[:60]}")
            term_line = message.id == "the source"  # the glossary's English term line stays
            lecture = LECTURE.search(message.id) and "reference" not in po.parts and not term_line
            if lecture and ZH not in message.string:
                wrong.append(f"{po.name}: {message.id[:60]} -> {message.string[:40]}")
    assert not wrong, "call the source 原讲稿:\n" + "\n".join(wrong)
    intro = catalogues.load_po(base / "intro.po")
    assert any(f"**{ZH}**" in m.string for m in intro if m.id)  # defined on the intro page
