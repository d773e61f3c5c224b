"""The Chinese font chipsim ships, and how figures fall back to it.

Figures in the Chinese edition draw their labels with :data:`FAMILY`, a subset of Noto Sans CJK
SC in two weights (SIL Open Font License 1.1, ``OFL.txt`` beside this file) that ships inside
the package: no system font, no download. It covers every character of chipsim's and the book's
Chinese catalogues and the 4,000 most frequent hanzi, so a learner's own labels draw too
(``locales/cjk_font.py`` makes it). A CJK font of the system (Noto Sans CJK, PingFang, YaHei,
...) that matplotlib already knows comes after it, for rarer characters.

Latin text keeps matplotlib's default font: the CJK fonts are appended to ``font.family``, and
matplotlib (>= 3.6) falls back along that list glyph by glyph.

Example:
    >>> from chipsim.viz.fonts import FAMILY, register
    >>> register() == FAMILY
    True
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = [
    "BOLD_FILE",
    "CJK_FONTS",
    "FAMILY",
    "FONT_FILE",
    "cjk_fonts",
    "register",
    "use_cjk_fallback",
]

#: The font files chipsim ships (about 1 MB each: regular, and bold for titles), their family.
FONT_FILE = Path(__file__).with_name("ChipsimCJKSans-Regular.otf")
BOLD_FILE = FONT_FILE.with_name("ChipsimCJKSans-Bold.otf")
FAMILY = "Chipsim CJK Sans"

#: System fonts that draw Chinese, best first: Debian/Ubuntu (fonts-noto-cjk), Adobe, macOS,
#: Windows. Used after :data:`FAMILY`, only when matplotlib's font list already has them.
CJK_FONTS: tuple[str, ...] = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "PingFang SC",
    "Microsoft YaHei",
    "SimHei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK JP",
)


def register() -> str:
    """Add the shipped font to matplotlib's font list (once, silently); returns its family."""
    from matplotlib import font_manager

    known = {f.fname for f in font_manager.fontManager.ttflist}
    for path in (FONT_FILE, BOLD_FILE):
        if str(path) not in known:
            font_manager.fontManager.addfont(str(path))
    return FAMILY


def cjk_fonts() -> list[str]:
    """The fallback fonts for Chinese, in order: the shipped one, then a known system one."""
    from matplotlib import font_manager

    families = [register()]
    names = {f.name for f in font_manager.fontManager.ttflist}
    families += [name for name in CJK_FONTS if name in names][:1]
    return families


def use_cjk_fallback() -> None:
    """Let matplotlib draw Chinese: the CJK fonts behind the default one, glyph by glyph.

    Text that exists already -- the title and labels of axes made before this ran, e.g.
    ``plt.subplots()`` then ``ax.set_title(tr(...))`` -- gets the fallback too.
    """
    import matplotlib as mpl
    from matplotlib.text import Text

    fallback = cjk_fonts()

    def with_fonts(families: list[str]) -> list[str]:
        return [*families, *(f for f in fallback if f not in families)]

    mpl.rcParams["font.family"] = with_fonts(list(mpl.rcParams["font.family"]))
    if "matplotlib.pyplot" in sys.modules:
        from matplotlib._pylab_helpers import Gcf

        for manager in Gcf.get_all_fig_managers():
            for text in manager.canvas.figure.findobj(Text):
                text.set_fontfamily(with_fonts(list(text.get_fontfamily())))
