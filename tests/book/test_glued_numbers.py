"""No measured number is typed into a page's prose: it is glued from the cell that computes it.

A number typed into the text drifts from its cell the first time the model changes (4.5 said
"a 3.4 MiB arena" while its cell printed 2.2 MiB). Every number with a unit of measure in a
page's prose -- cycles, bytes, KiB/MiB, %, speed-ups (2.5x), µs/ms, GB/s, TFLOP/s, pJ -- must
come from ``{glue:text}``, or be on :data:`ALLOWED` below, which says why it is not a
measurement. The check reads the Markdown sources (no build): prose outside code, inline code,
roles, math and comments. Shapes ("128 x 512") restate the cell's own code and are not
checked.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bookbuild import ROOT, toc_pages  # noqa: E402

UNITS = (
    r"cycles?|bytes?|B|KiB|MiB|GiB|kB|KB|MB|GB|%|x|×|µs|us|ms|ns|s|GB/s|TB/s|B/cycle|"
    r"bytes/cycle|TFLOP/s|GFLOP/s|FLOP/byte|FLOP/B|FLOPs?|pJ|uJ|µJ|GHz|MHz|elements?|kernels?|"
    r"launch(?:es)?|instructions?|tiles?|rows?|requests?|per ?cent|times"
)
#: a number (not part of a word, a name like f32 or a dotted version) and its unit
MEASURE = re.compile(
    rf"(?<![\w.\-/])(?:~|≈|about |±)?(\d[\d,]*(?:\.\d+)?)(?:\s?|-)({UNITS})(?![\w/])(?!\s*[x×]?\s*(?:\d|‹role›))"
)
SHAPE = re.compile(r"\d[\d,]*(?:\s?[x×]\s?\d[\d,]*)+")

#: (page, phrase, why it is typed): numbers that are not measurements. Keep this short.
ALLOWED: list[tuple[str, str, str]] = [
    # The source's own words, quoted so the book can test them.
    ("book/choosing", 'the source\'s "40% less"', "quotes the source's claim"),
    ("book/choosing", 'the source\'s "40% less memory"', "quotes the source's claim"),
    ("book/claims", "cut memory by 40%", "quotes the source's claim (the claim table)"),
    ("book/dynamic_mapping", "dropped by 40%", "quotes the source's claim"),
    ("book/dynamic_mapping", "not 40%", "quotes the source's claim"),
    ("book/dynamic_mapping", "The source's 40%", "quotes the source's claim"),
    # Made-up inputs of a self-check question: the reader computes with them.
    ("book/execution_units", "takes 30,000 cycles and its compute 20,000", "a question's data"),
    ("book/execution_units", "max(30,000, 20,000) = 30,000 cycles", "its worked answer"),
    ("book/execution_units", "does 4 FLOPs per DRAM byte", "a question's data"),
    ("book/execution_units", "At 4 FLOP/byte", "the question's data, in its answer"),
    ("book/dynamic_mapping", "4. 3 MiB are cached, and the largest free block is 1 MiB",
     "a question's data"),  # fmt: skip
    ("book/dynamic_mapping", "a 1.5 MiB tensor", "a question's data"),
    ("book/dynamic_mapping", "holds 1.5 MiB", "the question's data, in its answer"),
    # A property of a library, cited (the simulated rows around it are glued).
    ("book/accuracy", "keeps rows up to 8,192 elements", "PyTorch's compiled layernorm, cited"),
    # Rules of the grader, stated by the Exercises page (owned by the grader's authors).
    ("book/exercises", "(60 s)", "the grader's per-cell time limit, a rule"),
    ("book/exercises", "(4 GiB)", "the grader kernel's memory limit, a rule"),
]


def prose(markdown: str) -> str:
    """The text a reader reads as prose: code, roles, math, comments, targets blanked out."""
    text = re.sub(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", "", markdown, flags=re.S | re.M)
    text = re.sub(r"^---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"^%.*$", "", text, flags=re.M)  # MyST comments
    text = re.sub(r"^\s*:[\w-]+:.*$", "", text, flags=re.M)  # directive options
    text = re.sub(r"\{[\w:.-]+\}`[^`]*`", "‹role›", text)  # {glue:text}`x`, {term}`y`, ...
    text = re.sub(r"``.*?``|`[^`\n]*`", "‹code›", text)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", "‹math›", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    return text


def typed_measures(page: str, markdown: str) -> list[str]:
    """Each typed measured quantity of ``markdown`` not on :data:`ALLOWED`, with its line."""
    text = prose(markdown)
    allowed = [phrase for p, phrase, _ in ALLOWED if p == page]
    found = []
    for line in re.split(r"\n\s*\n", text):  # paragraph by paragraph
        line = " ".join(line.split())
        masked = line
        for phrase in allowed:
            masked = masked.replace(phrase, "‹allowed›")
        masked = SHAPE.sub("‹shape›", masked)
        for match in MEASURE.finditer(masked):
            found.append(f"{match.group(0).strip()!r} in: {line.strip()[:120]}")
    return found


@pytest.mark.parametrize("page", toc_pages())
def test_prose_numbers_are_glued(page):
    markdown = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    typed = typed_measures(page, markdown)
    assert not typed, (
        f"{page}: glue these from the cell that computes them ({{glue:text}}`name`), or add "
        "a reason to ALLOWED in tests/book/test_glued_numbers.py if one is not a "
        "measurement:\n  " + "\n  ".join(typed)
    )


def test_every_allowed_phrase_is_still_on_its_page():
    """An allow-list entry whose phrase is gone allows nothing: remove it."""
    for page, phrase, _ in ALLOWED:
        assert phrase in prose((ROOT / f"{page}.md").read_text(encoding="utf-8")), (page, phrase)


@pytest.mark.parametrize(
    ("text", "typed"),
    [
        ("The activations need a 3.4 MiB arena.", ["3.4 MiB"]),
        ("It is 2.5x faster and moves 12 KiB, 90% of the time, in 16 ms.",
         ["2.5x", "12 KiB", "90%", "16 ms"]),  # fmt: skip
        ("A {glue:text}`arena_mib:.1f` MiB arena, {glue:text}`pct:.0%` busy.", []),
        ("`W` is 128 x 512 float32, f32[128, 768], `x + 1.5 MiB`, $2^{10}$ bytes", []),
        ("```python\nprint('3.4 MiB')\n```\n", []),
        ("ResNet-50 and GPT-2 and 4x4x4 tiles", []),
    ],
)
def test_the_heuristic_finds_typed_measures_only(text, typed):
    found = [f.split(" in:")[0].strip("'") for f in typed_measures("book/x", text)]
    assert found == typed
