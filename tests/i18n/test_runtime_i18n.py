"""chipsim.i18n: runtime text (figure labels, later grader feedback) in the learner's language."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chipsim import i18n
from chipsim.i18n import read_po, tr, use_language

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("english_by_default")


def test_english_is_the_message_itself_with_fields_filled_in():
    assert tr("schedule step") == "schedule step"
    assert (
        tr("{chip}: {cycles:,} cycles", chip="edge-npu", cycles=12345) == "edge-npu: 12,345 cycles"
    )
    assert tr("no {fields} here") == "no {fields} here"  # no fields given: text as it is


def test_chinese_translation_moves_fields_and_keeps_their_format():
    with use_language("zh_CN"):
        assert tr("schedule step") == "调度步"
        assert tr("{chip}: {cycles:,} cycles", chip="edge-npu", cycles=12345) == (
            "edge-npu：12,345 个周期"
        )
        assert tr("a message nobody translated") == "a message nobody translated"
    assert tr("schedule step") == "schedule step"  # the block ended


@pytest.mark.parametrize("tag", ["zh", "zh-CN", "zh_cn", "zh_Hans", "ZH-hans-cn"])
def test_language_tags_are_normalised(tag):
    assert i18n.normalize(tag) == "zh_CN"


@pytest.mark.parametrize("tag", ["en", "en_US", "en-GB", "C", ""])
def test_english_tags(tag):
    assert i18n.normalize(tag) == "en"


def test_environment_variable_and_set_language_choose_the_language(monkeypatch):
    monkeypatch.setenv("CHIPSIM_LANG", "zh_CN")
    assert i18n.current_language() == "zh_CN" and tr("cycles") == "周期"
    i18n.set_language("en")  # an explicit choice wins over the environment
    assert tr("cycles") == "cycles"
    with use_language("zh"):  # and a block wins over both
        assert tr("cycles") == "周期"
    assert tr("cycles") == "cycles"


def test_unknown_language_names_where_it_came_from(monkeypatch):
    monkeypatch.setenv("CHIPSIM_LANG", "fr")
    with pytest.raises(ValueError, match=r"\$CHIPSIM_LANG 'fr'.*speaks en, zh_CN"):
        i18n.current_language()
    with pytest.raises(ValueError, match="language 'xx'"):
        i18n.set_language("xx")


def test_read_po_skips_fuzzy_obsolete_and_untranslated_and_joins_lines(tmp_path):
    po = tmp_path / "t.po"
    po.write_text(
        textwrap.dedent(
            r"""
            msgid ""
            msgstr ""
            "Language: zh_CN\n"

            #: somewhere.py
            msgid "plain"
            msgstr "普通"

            #, fuzzy
            #| msgid "old English"
            msgid "changed English"
            msgstr "旧的翻译"

            msgid ""
            "a long message "
            "on two lines"
            msgstr ""
            "一条很长的"
            "消息，带 \"引号\" 和\n换行"

            msgid "not yet"
            msgstr ""

            msgctxt "unit"
            msgid "plan"
            msgstr "规划"

            #~ msgid "gone"
            #~ msgstr "已删除"
            """
        ),
        encoding="utf-8",
    )
    assert read_po(po) == {
        "plain": "普通",
        "a long message on two lines": '一条很长的消息，带 "引号" 和\n换行',
        "unit\x04plan": "规划",
    }


def test_read_po_names_the_bad_line(tmp_path):
    po = tmp_path / "bad.po"
    po.write_text('msgid "x"\nmsgstr unquoted\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.po:2"):
        read_po(po)


def test_runtime_catalogue_is_complete_and_keeps_every_field(editions, catalogues):
    """Every tr("...") of chipsim and of the chapters is translated, fields unchanged."""
    template = catalogues.runtime_messages()
    assert "schedule step" in template and "Tensor Core" in template  # code and tables
    assert "y = (x + 1) * 2 as a static graph" in template  # a chapter's code cell
    assert "{n:,} bytes" in template  # tr_in(language, "...") names its language first
    for edition in editions.translations():
        po = ROOT / "chipsim" / "locales" / edition.language / "LC_MESSAGES" / "chipsim.po"
        status = catalogues.catalogue_status(template, po, "chipsim", runtime=True)
        assert status.done, (
            "run `make translations` and translate these in "
            f"{po.relative_to(ROOT)}:\n{status.problems()}"
        )


def test_field_check_catches_a_lost_or_renamed_field(catalogues):
    assert catalogues.markup_problems("{n} nodes", "{n} 个节点", runtime=True) == []
    assert catalogues.markup_problems("{n} nodes", "{m} 个节点", runtime=True)
    assert catalogues.markup_problems("{chip}: {cycles:,}", "{chip}", runtime=True)


FIGURE_SCRIPT = """
import warnings
warnings.simplefilter("error")  # a missing glyph is a UserWarning: fail on it
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from chipsim.i18n import tr
fig, ax = plt.subplots()            # the axes' title exists before any tr() ran
ax.set_title(tr("y = (x + 1) * 2 as a static graph"))
ax.set_xlabel(tr("schedule step"))
fig.savefig({png!r})
print(ax.get_title(), "|", ax.get_xlabel(), "|", matplotlib.rcParams["font.family"])
"""


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_figures_draw_their_labels_in_the_language_without_missing_glyphs(tmp_path, language):
    """A fresh interpreter (matplotlib's fonts are process state), warnings as errors."""
    png = tmp_path / "figure.png"
    proc = subprocess.run(
        [sys.executable, "-c", FIGURE_SCRIPT.format(png=str(png))],
        env=dict(os.environ, CHIPSIM_LANG=language),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == "", proc.stderr  # no glyph warning, no font notice
    title, xlabel, families = (part.strip() for part in proc.stdout.split("|"))
    if language == "en":
        assert (title, xlabel) == ("y = (x + 1) * 2 as a static graph", "schedule step")
        assert "CJK" not in families  # the English edition's figures are untouched
    else:
        assert (title, xlabel) == ("y = (x + 1) * 2 的静态图", "调度步")
        assert "CJK" in families or "Hei" in families or "Han" in families
    assert png.stat().st_size > 1000


def test_matplotlib_draws_chinese_with_the_font_chipsim_ships():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import font_manager

    from chipsim.viz import fonts

    assert fonts.cjk_fonts()[0] == fonts.FAMILY
    path = font_manager.findfont(fonts.FAMILY, fallback_to_default=False)
    assert Path(path).resolve() == fonts.FONT_FILE.resolve()


def test_viz_labels_follow_the_language():
    """chipsim's own figures: the memory-plan picture's axes, in both languages."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chipsim.viz.memory_plan import draw_memory_plan

    class Record:
        def __init__(self, id, first, last, size):
            self.id, self.first, self.last, self.size = id, first, last, size
            self.length = last - first

    class Plan:
        records = [Record("t0", 0, 2, 64), Record("t1", 1, 3, 32)]
        offsets = {"t0": 0, "t1": 64}
        arena_size, lower_bound, strategy = 96, 96, "greedy"

    labels = {}
    for language in ("en", "zh_CN"):
        with use_language(language):
            ax = draw_memory_plan(Plan())
            labels[language] = (ax.get_xlabel(), ax.get_ylabel(), ax.get_title())
            plt.close(ax.figure)
    assert labels["en"] == (
        "schedule step",
        "address (bytes)",
        "greedy: arena 96 bytes, lower bound 96 bytes",
    )
    assert labels["zh_CN"] == ("调度步", "地址（bytes）", "greedy：内存池 96 bytes，下界 96 bytes")


def test_tr_pads_text_fields_by_display_width():
    """A width in a template counts columns, a Chinese character as two: tables stay aligned."""
    with use_language("zh_CN"):
        assert tr("{label:8s}|{n:>5,}", label=tr("cycles"), n=1234) == "周期    |1,234"
        assert tr("{label:>8}|", label="张量核心") == "张量核心|"
        assert tr("{label!r:8}|", label="周期") == "'周期'  |"
    assert tr("{label:8s}|", label="cycles") == "cycles  |"  # English: as str.format
