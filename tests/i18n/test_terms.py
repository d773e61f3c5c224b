"""One term, one word: the Chinese edition uses the word of ``locales/zh_CN/terms.yml``.

Every catalogue a Chinese reader meets is checked: the book's pages, chipsim's runtime messages
and the Chinese half of the exercise notebooks' instructions (plus the Chinese in their code).
Where the English has a term, the Chinese has the table's word; nowhere does the Chinese use a
word the table avoids (缓存 alone, 尾声, 预置, eager outside a gloss ...). The glossary is the
home of the terms it lists: the table must give the glossary's own Chinese line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from chipsim.i18n import read_po

ROOT = Path(__file__).resolve().parents[2]
TABLE = yaml.safe_load((ROOT / "locales" / "zh_CN" / "terms.yml").read_text(encoding="utf-8"))
BOOK = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
RUNTIME = ROOT / "chipsim" / "locales" / "zh_CN" / "LC_MESSAGES" / "chipsim.po"
NOTEBOOKS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
RULE = "\n\n---\n\n"

#: code, and roles whose text is a target rather than words (glue, doc, ref, py ...)
CODE = re.compile(r"``.*?``|`[^`]*`", re.S)
ROLE = re.compile(r"\{(?!term\})[\w:-]+\}`[^`]*`|:[\w:-]+:`[^`]*`")
TERM_ROLE = re.compile(r"\{term\}`([^`<]*)(?:<[^`]*>)?`")
QUOTED = re.compile(r"“[^”]*”")
FIELD = re.compile(r"\{[A-Za-z_][^{}]*\}")  # a runtime message's {field}: filled in by code


def words(text: str, *, links: bool = True) -> str:
    """``text`` without code and reference roles; a glossary link keeps its words (or, with
    ``links=False``, is left out: its text is a headword of the glossary, checked there)."""
    text = ROLE.sub(" ", text)
    text = TERM_ROLE.sub(r"\1" if links else " ", text)
    return FIELD.sub(" ", CODE.sub(" ", text))


def pairs() -> list[tuple[str, str, str]]:
    """(where, English, Chinese) for every translated message a Chinese reader sees."""
    found = []
    for po in [*sorted(BOOK.rglob("*.po")), RUNTIME]:
        name = po.relative_to(ROOT).as_posix()
        for msgid, msgstr in read_po(po).items():
            if msgstr != msgid:  # kept as it is on purpose: term lines, code, {glue:md}
                found.append((name, msgid, msgstr))
    for path in NOTEBOOKS:
        name = path.relative_to(ROOT).as_posix()
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            source = "".join(cell["source"])
            if cell["cell_type"] == "markdown" and RULE in source:
                english, chinese = source.split(RULE, 1)
                found.append((f"{name} cell {i}", english, chinese))
            elif cell["cell_type"] == "code":
                chinese = "\n".join(
                    line for line in source.splitlines() if re.search(r"[\u4e00-\u9fff]", line)
                )
                if chinese:
                    found.append((f"{name} cell {i} (code)", "", chinese))
    return found


PAIRS = pairs()


def glossary_entries() -> dict[str, str]:
    """English headword -> its Chinese line, from book/glossary.md."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    entries = {}
    for block in re.split(r"\n\s*\n", body):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if len(lines) >= 3 and not lines[0].startswith(" "):
            entries[lines[0].strip()] = lines[1].strip()
    return entries


def test_the_catalogues_are_found():
    assert len(PAIRS) > 1000
    assert any(w.startswith("solutions/") for w, _, _ in PAIRS)
    assert any(w.endswith("chipsim.po") for w, _, _ in PAIRS)


@pytest.mark.parametrize("term", TABLE["terms"], ids=lambda t: t["term"])
def test_the_glossary_is_the_home_of_its_terms(term):
    if term.get("glossary"):
        entries = glossary_entries()
        assert term["term"] in entries, f"book/glossary.md has no entry {term['term']!r}"
        assert entries[term["term"]] == term["zh"], (
            f"terms.yml says {term['zh']!r} for {term['term']!r}, the glossary "
            f"{entries[term['term']]!r}: one of them is wrong"
        )


@pytest.mark.parametrize("term", TABLE["terms"], ids=lambda t: t["term"])
def test_the_chinese_uses_the_terms_word(term):
    en = re.compile(term["en"])
    accept = re.compile(term.get("accept") or re.escape(term["zh"]))
    exempt = re.compile(term["except"]) if term.get("except") else None
    wrong = []
    for where, english, chinese in PAIRS:
        text = " ".join(words(english).split())
        if not en.search(text) or (exempt and exempt.search(" ".join(english.split()))):
            continue
        if not accept.search(words(chinese)):
            wrong.append(f"{where}: {text[:90]!r}\n    -> {' '.join(chinese.split())[:90]!r}")
    assert not wrong, (
        f"the English says {term['term']!r}, the Chinese does not say {term['zh']!r} "
        f"(locales/zh_CN/terms.yml):\n" + "\n".join(wrong)
    )


AVOIDED = [(t["term"], t["avoid"], t["zh"]) for t in TABLE["terms"] if t.get("avoid")] + [
    (w["name"], w["avoid"], w["why"]) for w in TABLE.get("words", [])
]


@pytest.mark.parametrize(("name", "avoid", "instead"), AVOIDED, ids=[a[0] for a in AVOIDED])
def test_the_chinese_avoids_other_words_for_the_term(name, avoid, instead):
    pattern = re.compile(avoid)
    wrong = []
    for where, _, chinese in PAIRS:
        text = QUOTED.sub(" ", words(chinese, links=False))
        hit = pattern.search(text)
        if hit:
            context = text[max(0, hit.start() - 20) : hit.end() + 20]
            wrong.append(f"{where}: …{' '.join(context.split())}…")
    assert not wrong, f"write {instead!r}, not {avoid!r}:\n" + "\n".join(wrong)


def test_the_table_checks_what_the_issue_named():
    """The terms issue 26 found used several ways are all in the table."""
    named = {t["term"] for t in TABLE["terms"]}
    assert {
        "SRAM",
        "L2 cache",
        "the allocator's cache",
        "CPU cache",
        "epilogue",
        "lifetime",
        "intermediate",
        "batch",
        "kernel",
        "the source",
        "preset",
        "eager execution",
        "scratchpad",
        "bucket",
    } <= named
