"""What the book quotes of chipsim's TraceError is what the reader sees, in each edition.

Claim 11 of the claim table shows the first line of the error a Python ``if`` on a traced
tensor raises; it used to cut that line at the ASCII ": " of the English message, so the
Chinese row (whose message uses "：") read "…bool[] 值）：: Python control flow …". And 4.7
calls the error "the exact message you will see" while its Chinese text quoted the English.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import chipsim as cs
from chipsim.i18n import read_po, tr, use_language

ROOT = Path(__file__).resolve().parents[2]
PITFALLS = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book" / "pitfalls.po"
CLAIM_11 = (
    "`TraceError`: “{message} …”; the `where` and `cond` versions match eager on both branches"
)


pytestmark = pytest.mark.usefixtures("english_by_default")


def python_if(x):
    if x.sum() > 0:
        return x * 2
    return x


def first_line(language: str) -> str:
    """The first line of the TraceError, as book/claims.md shows it (without its last colon)."""
    with use_language(language), pytest.raises(cs.TraceError) as err:
        cs.trace(python_if, np.ones(3, np.float32))
    return str(err.value).splitlines()[0].rstrip(":：")


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_claim_11_shows_the_whole_first_line_of_the_error(language):
    line = first_line(language)
    with use_language(language):
        cell = tr(CLAIM_11, message=line)
        control_flow = tr(
            "{where}: Python control flow on a traced tensor ({what} of a {type} value):{source}\n"
            "A static graph is recorded before any data exists, so Python cannot know the "
            "answer yet and cannot choose a branch.\n"
            "Instead, put the choice into the graph: chipsim.ops.where(cond, a, b) picks "
            "values elementwise, and chipsim.cond(pred, true_fn, false_fn, *operands) chooses "
            "between two computations (the graph records both branches).",
            where="W",
            what="bool()",
            type="bool[]",
            source="",
        ).splitlines()[0]
    assert line in cell
    assert not re.search(r"[:：]\s*[:：]", cell), cell  # the old "值）：: Python control flow"
    assert control_flow.split("W", 1)[1].rstrip(":：") in line  # the message of this language
    if language != "en":
        assert "Python control flow on a traced tensor" not in cell


def test_claim_11_is_not_cut_at_an_ascii_colon():
    source = (ROOT / "book" / "claims.md").read_text(encoding="utf-8")
    assert 'split(": "' not in source, "claim 11 shows the error's first line as it is"
    assert "“{message} …”" in source


def pitfalls_messages() -> dict[str, str]:
    return read_po(PITFALLS)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_pitfalls_quotes_the_error_the_reader_sees(language):
    """Both editions of 4.7 name the notebook location and the error the way chipsim prints
    them in that language ("the exact message you will see")."""
    messages = pitfalls_messages()
    shown = [msgid if language == "en" else msgstr for msgid, msgstr in messages.items()
             if "notebook cell, line N" in msgid]  # fmt: skip
    assert len(shown) == 2  # the explanation under the error, and self-check question 2
    with use_language(language):
        location = tr("notebook cell, line {line}", line="N")
    line = first_line(language)
    for text in shown:
        assert f"`{location}`" in text, f"4.7 should name the location as {location!r}: {text}"
        quotes = re.findall(r"“([^”]+)”|\"([^\"]+)\"", text)
        for quote in ["".join(q) for q in quotes]:
            assert quote in line, f"4.7 quotes {quote!r}, the reader sees {line!r}"
    assert any(re.search(r"“[^”]+”|\"[^\"]+\"", text) for text in shown)
