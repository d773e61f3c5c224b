"""Chinese text on the book's pages without a system CJK font: the font chipsim ships.

A reader's machine without a CJK font (a fresh Linux with only Python, say) would show the
Chinese edition, and the Chinese terms of the English one, as empty boxes. This extension
copies the font chipsim ships (``chipsim/viz/fonts``, a subset of Noto Sans CJK SC under the
SIL OFL) into ``_static/fonts/`` and adds it at the end of the theme's font lists: a system
CJK font, where there is one, is used first, and the browser fetches the shipped file -- from
the book itself, never from the network -- only for characters no earlier font draws.

In code and outputs (``pre``) the CJK fallback is the same file scaled by ``size-adjust`` so
that a CJK character is exactly two columns of the monospace font (0.6 em per column, as
DejaVu Sans Mono, Menlo, SF Mono, Liberation Mono and Courier have): a text table padded by
display width (``chipsim.text.pad``) stays aligned in the browser as in a terminal.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from chipsim.viz.fonts import BOLD_FILE, FAMILY, FONT_FILE

CSS_NAME = "chipsim-cjk.css"
#: The system CJK fonts preferred to the shipped one in prose (their full font sets).
SYSTEM_CJK = '"Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei"'
#: Width of one column of the monospace fonts the theme lists, in em.
MONO_COLUMN_EM = 0.6


def css() -> str:
    """The stylesheet: two faces from one file, appended to the theme's font lists."""
    url, bold = f"fonts/{FONT_FILE.name}", f"fonts/{BOLD_FILE.name}"
    scale = f"{2 * MONO_COLUMN_EM * 100:.1f}%"  # a CJK glyph is 1 em wide; two columns: 1.2 em
    return f"""/* Chinese text without a system CJK font: see book/_ext/cjk_font.py */
@font-face {{
  font-family: "{FAMILY}";
  src: url("{url}") format("opentype");
  font-display: swap;
}}
@font-face {{
  font-family: "{FAMILY}";
  src: url("{bold}") format("opentype");
  font-weight: 700;
  font-display: swap;
}}
@font-face {{
  font-family: "{FAMILY} Mono";
  src: url("{url}") format("opentype");
  size-adjust: {scale};
  unicode-range: U+2E80-9FFF, U+F900-FAFF, U+FE30-FE4F, U+FF00-FF60, U+FFE0-FFE6;
  font-display: swap;
}}
html {{
  --pst-font-family-base: var(--pst-font-family-base-system), {SYSTEM_CJK}, "{FAMILY}";
  --pst-font-family-heading: var(--pst-font-family-base-system), {SYSTEM_CJK}, "{FAMILY}";
  --pst-font-family-monospace: var(--pst-font-family-monospace-system), "{FAMILY} Mono";
}}
"""


def write_font(app: Sphinx, exception: Exception | None) -> None:
    """``build-finished``: put the font and the stylesheet into the HTML's ``_static``."""
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    (static / "fonts").mkdir(parents=True, exist_ok=True)
    for path in (FONT_FILE, BOLD_FILE):
        shutil.copyfile(path, static / "fonts" / path.name)
    shutil.copyfile(FONT_FILE.with_name("OFL.txt"), static / "fonts" / "OFL.txt")
    (static / CSS_NAME).write_text(css(), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_css_file(CSS_NAME, priority=900)  # after the theme's own stylesheets
    app.connect("build-finished", write_font)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
