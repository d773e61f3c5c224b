"""The Chinese edition says ratios and cross-references the way Chinese does (issue 26).

* "快了 N 倍" reads as N + 1 times as fast ("快了 1.05 倍" as about twice as fast): a speed ratio
  is said by :func:`chipsim.ratios.faster` (是…的 N 倍, 快 5%), and any number followed by 倍 in
  a catalogue is a "是…的 N 倍" (or 加速比) form.
* ``{doc}`static_mapping`一节`` renders as "4.3 把静态图映射到芯片上一节", read as "…上一节" (the
  previous section): a page title that Chinese text follows is set off as 《title》.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chipsim import i18n
from chipsim.i18n import read_po, use_language
from chipsim.ratios import faster, percent

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "locales" / "zh_CN" / "LC_MESSAGES" / "book"
RUNTIME = ROOT / "chipsim" / "locales" / "zh_CN" / "LC_MESSAGES" / "chipsim.po"
CATALOGUES = [*sorted(BOOK.rglob("*.po")), RUNTIME]

#: a number, a glued value or a runtime field, followed by 倍
AMOUNT = r"(?:\d[\d.,]*|\{glue:text\}`[^`]*`|\{[A-Za-z_][^{}]*\}|[几数多好]+[十百千]?)"
#: a measured amount (a number, a glued value, a field) followed by 倍
TIMES = re.compile(r"(?:N|\d[\d.,]*)\s*倍")
VALUE = re.compile(r"\{glue:text\}`[^`]*`|\{[A-Za-z_][^{}]*\}")
#: the forms that read one off: 快了 N 倍, 慢了 N 倍, 快到 N 倍, 提高了 N 倍 ...
VERB = r"(?:[快慢](?:了|到|上)?|(?:提高|增加|增长|降低|减少|加快)了?)"
OFF_BY_ONE = re.compile(VERB + r"\s*" + AMOUNT + r"\s*倍")


def messages() -> list[tuple[str, str]]:
    return [
        (po.relative_to(ROOT).as_posix(), msgstr)
        for po in CATALOGUES
        for msgid, msgstr in read_po(po).items()
        if msgstr != msgid
    ]


MESSAGES = messages()


pytestmark = pytest.mark.usefixtures("english_by_default")


def test_no_catalogue_says_faster_by_n_times():
    wrong = [f"{where}: {text}" for where, text in MESSAGES if OFF_BY_ONE.search(text)]
    assert not wrong, "say 是…的 N 倍 or 快 5% (chipsim.ratios.faster):\n" + "\n".join(wrong)


def test_every_n_times_is_a_shi_de_frame():
    """'N 倍' only after '的' in its clause ('是动态图的 4.9 倍', '下界的 1.003 倍') or '加速比'."""
    wrong = []
    for where, message in MESSAGES:
        text = VALUE.sub("N", message)  # a format spec's ':' is no clause boundary
        for hit in TIMES.finditer(text):
            clause = re.split(r"[，。；：！？,;:\n]", text[: hit.start()])[-1]
            if "的" not in clause and "加速比" not in clause and "翻" not in clause:
                wrong.append(f"{where}: …{text[max(0, hit.start() - 30) : hit.end()]}")
    assert not wrong, "a ratio needs its 'A 是 B 的 N 倍' frame:\n" + "\n".join(wrong)


def test_the_checks_catch_the_forms_the_issue_found():
    for bad in ("只快了 1.05 倍", "速度快了 {glue:text}`gpu_speedup:.1f` 倍", "快到 3.4 倍"):
        assert OFF_BY_ONE.search(bad), bad
    for good in ("速度是动态图的 4.9 倍", "比动态图快 5%", "耗时是原来的 3.0 倍"):
        assert not OFF_BY_ONE.search(good), good


@pytest.mark.parametrize(
    ("ratio", "english", "chinese"),
    [
        (4.91, "4.9 times as fast as eager execution", "速度是动态图的 4.9 倍"),
        (2.0, "2.0 times as fast as eager execution", "速度是动态图的 2.0 倍"),
        (1.97, "97% faster than eager execution", "比动态图快 97%"),
        (1.46, "46% faster than eager execution", "比动态图快 46%"),
        (1.05, "5% faster than eager execution", "比动态图快 5%"),
        (1.042, "4.2% faster than eager execution", "比动态图快 4.2%"),
        (1.002, "about as fast as eager execution", "和动态图差不多快"),
        (1 / 1.25, "25% slower than eager execution", "比动态图慢 25%"),
        (1 / 3.04, "3.0 times as slow as eager execution", "耗时是动态图的 3.0 倍"),
    ],
)
def test_faster_picks_the_form_from_the_value_in_both_languages(ratio, english, chinese):
    assert faster(ratio, than=i18n.tr("eager execution")) == english
    with use_language("zh_CN"):
        assert faster(ratio, than=i18n.tr("eager execution")) == chinese
        assert not OFF_BY_ONE.search(faster(ratio))


def test_faster_refuses_what_is_not_a_ratio():
    for bad in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive number"):
            faster(bad)


def test_percent_keeps_two_digits():
    assert [percent(x) for x in (0.05, 0.053, 0.0049, 0.23, 0.0999)] == [
        "5%",
        "5.3%",
        "0.49%",
        "23%",
        "10%",
    ]


#: a {doc} role without its own title, followed (after at most a space) by Chinese text
BARE_DOC = re.compile(r"(?<!《)\{doc\}`[^`<>]*`(?!》) ?(?=[\u4e00-\u9fff])")


def test_a_page_title_followed_by_chinese_is_set_off():
    wrong = [f"{where}: {text[:100]}" for where, text in MESSAGES if BARE_DOC.search(text)]
    assert not wrong, (
        "write 《{doc}`page`》一节 (or give the role a title of its own), or the title runs "
        "into the text ('…映射到芯片上一节'):\n" + "\n".join(wrong)
    )


def test_the_doc_check_catches_the_issue_case():
    assert BARE_DOC.search("{doc}`static_mapping`一节会量出它省下了多少")
    assert BARE_DOC.search("这就是 {doc}`execution_units` 中讲的")
    assert not BARE_DOC.search("《{doc}`static_mapping`》一节会量出")
    assert not BARE_DOC.search("收录在{doc}`术语表 <glossary>`中")
    assert not BARE_DOC.search("（见 {doc}`accuracy`）")


def test_the_style_guide_teaches_the_right_forms():
    style = (ROOT / "locales" / "zh_CN" / "STYLE.md").read_text(encoding="utf-8")
    unquoted = re.sub(r"“[^”]*”", "", style)  # the forms it warns against, quoted
    assert not OFF_BY_ONE.search(unquoted), "STYLE.md recommends 快了 N 倍"
    assert "chipsim.ratios" in style and "是…的" in style
    assert "terms.yml" in style
