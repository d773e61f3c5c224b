"""GPU terms are explained before a reader needs them: in the glossary, linked at first use.

The reader meets SM, thread block, grid-wide barrier, TF32, cuBLAS, ATen and CUDA cores in the
middle of other arguments. Each is a glossary entry (English and Chinese name), and the first
time the book's prose uses it -- in reading order -- it is a ``{term}`` link, in both editions.
The glossary page itself talks to the reader, not to the book's authors.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bookbuild import ROOT, load_catalogues, toc_pages  # noqa: E402

#: term -> how prose writes it (a regex)
TERMS = {
    "SM": r"\bSMs?\b",
    "thread block": r"\bthread blocks?\b",
    "grid-wide barrier": r"\bgrid-wide barrier\b",
    "TF32": r"\bTF32\b",
    "cuBLAS": r"\bcuBLAS\b",
    "ATen": r"\bATen\b",
    "CUDA core": r"\bCUDA cores?\b",
}
GLOSSARY = ROOT / "book" / "glossary.md"


def glossary_entries() -> dict[str, str]:
    """English term -> its Chinese term line, from the glossary directive."""
    text = GLOSSARY.read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    entries = {}
    for block in re.split(r"\n\s*\n", body):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if len(lines) >= 3 and not lines[0].startswith(" "):
            entries[lines[0].strip()] = lines[1].strip()
    return entries


def prose_paragraphs(page: str) -> list[str]:
    """The page's Markdown paragraphs (cells and fences of code removed), in order."""
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    text = re.sub(r"^---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    text = re.sub(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", "", text, flags=re.S | re.M)
    text = re.sub(r"^:::\{admonition\}", "", text, flags=re.M)
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def first_use(term: str) -> tuple[str, str]:
    """(page, paragraph) of the first prose use of ``term`` in reading order, glossary aside."""
    pattern = re.compile(TERMS[term])
    for page in toc_pages():
        if page == "book/glossary":
            continue
        for paragraph in prose_paragraphs(page):
            words = re.sub(r"\{term\}`([^`<]*)(?:<[^`]*>)?`", r"\1", paragraph)  # link text
            if pattern.search(re.sub(r"\{[\w:]+\}`[^`]*`|`[^`]*`", "", words)):
                return page, paragraph
    raise AssertionError(f"{term!r} is not used in the book's prose")


@pytest.mark.parametrize("term", sorted(TERMS))
def test_gpu_term_is_in_the_glossary_with_its_chinese_name(term):
    entries = glossary_entries()
    assert term in entries, f"add {term!r} to book/glossary.md"
    assert re.search(r"[\u3400-\u9fff]", entries[term]), entries[term]


@pytest.mark.parametrize("term", sorted(TERMS))
def test_first_use_links_to_the_glossary_in_both_editions(term):
    page, paragraph = first_use(term)
    link = re.compile(r"\{term\}`(?:[^`<]*<)?" + re.escape(term) + r">?`")
    assert link.search(paragraph), f"{page}: link the first {term!r} with {{term}}: {paragraph}"
    catalogues = load_catalogues()
    po = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / f"{page}.po"
    zh_terms = {term, glossary_entries()[term]}
    for message in catalogues.load_po(po):
        if message.id and " ".join(message.id.split()) in paragraph and link.search(message.id):
            roles = re.findall(r"\{term\}`([^`]*)`", message.string)
            assert any(r.split("<")[-1].rstrip(">") in zh_terms for r in roles), (
                f"{po.name}: the Chinese of the paragraph linking {term!r} has no {{term}}: "
                f"{message.string[:120]}"
            )
            return
    raise AssertionError(f"{po.name}: no message holds the paragraph of the first {term!r}")


def test_the_glossary_speaks_to_readers():
    """No author instructions (role syntax, 'the chapter') above the entries."""
    intro = GLOSSARY.read_text(encoding="utf-8").split("```{glossary}", 1)[0]
    assert "{term}" not in intro and "``" not in intro
    assert "you" in intro.lower() or "reader" in intro.lower() or "links here" in intro
