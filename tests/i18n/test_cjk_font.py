"""The Chinese font chipsim ships: figures draw Chinese on a machine without any CJK font.

``make book`` must build the Chinese edition where only Python, ``venv`` and ``make`` are
installed. The test renders Chinese figure labels in a fresh interpreter that cannot see a
single system font: fontconfig reads an empty configuration, matplotlib starts from an empty
config folder (no font cache), its system-font discovery returns nothing, and its font list
keeps only the fonts matplotlib itself ships. The script proves it is blind (the default font
warns about the missing glyphs) before it checks that chipsim's own drawing does not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chipsim.viz import fonts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "locales"))
import cjk_font  # noqa: E402  (locales/cjk_font.py: how the font is made)

BLIND = """
import os, warnings
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager as fm

# Blind matplotlib: no system-font discovery, only the fonts it ships itself.
own = os.path.realpath(matplotlib.get_data_path())
fm.findSystemFonts = lambda *args, **kwargs: []
fm.fontManager.ttflist = [f for f in fm.fontManager.ttflist
                          if os.path.realpath(f.fname).startswith(own)]
fm.fontManager.afmlist = [f for f in fm.fontManager.afmlist
                          if os.path.realpath(f.fname).startswith(own)]
assert fm.fontManager.ttflist, "matplotlib ships DejaVu Sans: the list cannot be empty"

import matplotlib.pyplot as plt

def draw(text):
    fig, ax = plt.subplots()
    ax.set_title(text)
    fig.canvas.draw()
    plt.close(fig)

# 1. Blind indeed: without chipsim's font, Chinese is missing glyphs.
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    draw("计算图")
print("BLIND", sum("missing from font" in str(w.message) for w in seen))

# 2. chipsim in Chinese: every label of a real figure, warnings as errors.
warnings.simplefilter("error")
from chipsim.i18n import tr, use_language
__REGISTRATION__
with use_language("zh_CN"):
    fig, ax = plt.subplots()
    ax.set_title(tr("y = (x + 1) * 2 as a static graph"), fontweight="bold")
    ax.set_xlabel(tr("schedule step"))
    ax.set_ylabel("__LEARNER__")  # a learner's own label, not from any catalogue
    fig.savefig(__PNG__)
    used = fm.findfont(fm.FontProperties(family="__FAMILY__"), fallback_to_default=False)
    bold = fm.findfont(fm.FontProperties(family="__FAMILY__", weight="bold"),
                       fallback_to_default=False)
print("TITLE", ax.get_title())
print("FONT", used)
print("BOLD", bold)
"""


def run_blind(tmp_path: Path, registration: str = "") -> subprocess.CompletedProcess:
    conf = tmp_path / "fonts.conf"
    conf.write_text('<?xml version="1.0"?>\n<fontconfig></fontconfig>\n', encoding="utf-8")
    (tmp_path / "mplconfig").mkdir()
    env = dict(
        os.environ,
        FONTCONFIG_FILE=str(conf),
        FONTCONFIG_PATH=str(tmp_path),
        MPLCONFIGDIR=str(tmp_path / "mplconfig"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path),
    )
    env.pop("CHIPSIM_LANG", None)
    script = (
        BLIND.replace("__PNG__", repr(str(tmp_path / "figure.png")))
        .replace("__FAMILY__", fonts.FAMILY)
        .replace("__LEARNER__", "吞吐量与延迟的权衡")  # a learner's label, in no catalogue
        .replace("__REGISTRATION__", registration)
    )
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=180
    )


def test_chinese_labels_draw_with_no_system_font(tmp_path):
    proc = run_blind(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert int(lines["BLIND"]) >= 3, "matplotlib still sees a CJK font: the test is not blind"
    assert lines["TITLE"] == "y = (x + 1) * 2 的静态图"
    assert Path(lines["FONT"]).resolve() == fonts.FONT_FILE.resolve()
    assert Path(lines["BOLD"]).resolve() == fonts.BOLD_FILE.resolve()  # a real bold face
    assert proc.stderr == ""  # registration prints nothing, no glyph is missing
    assert (tmp_path / "figure.png").stat().st_size > 1000


def test_without_the_shipped_font_the_blind_figure_fails(tmp_path, monkeypatch):
    """The same run with chipsim's font taken away fails on a missing glyph: the test bites."""
    hide = (
        "import chipsim.viz.fonts as _f\n"
        "_f.register = lambda: 'DejaVu Sans'\n"  # as if chipsim shipped no font
    )
    proc = run_blind(tmp_path, registration=hide)
    assert proc.returncode != 0
    assert "missing from font" in proc.stderr


def test_the_font_draws_every_character_of_the_chinese_catalogues():
    """A translator who writes a new character must re-make the font (locales/cjk_font.py)."""
    lacking = cjk_font.missing()
    assert not lacking, (
        f"{fonts.FONT_FILE.name} cannot draw {''.join(lacking)}: run "
        "`python locales/cjk_font.py build NotoSansCJK-Regular.ttc NotoSansCJK-Bold.ttc` "
        "(see its docstring)"
    )


def test_the_font_is_the_named_subset_and_small():
    from fontTools.ttLib import TTFont

    common = cjk_font.common_hanzi()
    assert len(common) == cjk_font.COMMON
    for path, weight in ((fonts.FONT_FILE, "Regular"), (fonts.BOLD_FILE, "Bold")):
        assert path == cjk_font.font_file(weight)
        font = TTFont(path, lazy=True)
        assert font["name"].getDebugName(1) == fonts.FAMILY == cjk_font.FAMILY
        assert font["name"].getDebugName(2) == weight
        cmap = font.getBestCmap()
        assert all(ord(c) in cmap for c in common)
        assert path.stat().st_size < 1_500_000
    assert (fonts.FONT_FILE.parent / "OFL.txt").read_text(encoding="utf-8").count("OFL") >= 1


@pytest.mark.parametrize("char", ["计", "。", "，", "（"])
def test_catalogue_scan_sees_ideographs_and_punctuation(char):
    assert cjk_font.is_cjk(char)
