"""Make the Chinese font the course ships: a subset of Noto Sans CJK SC (SIL OFL 1.1).

    python locales/cjk_font.py build NotoSansCJK-Regular.ttc NotoSansCJK-Bold.ttc
                                                               write chipsim/viz/fonts/*.otf
    python locales/cjk_font.py check                           characters the font lacks

The book's Chinese edition and chipsim's figures must draw Chinese on a machine that has no
system CJK font (only Python, ``venv`` and ``make``). A whole Noto Sans CJK font is 16 MB; the
course ships the characters it can draw instead, about 1 MB per weight (regular, and bold for
figure titles):

* every character of the Chinese catalogues (``chipsim/locales/zh_CN/.../chipsim.po``, the text
  code draws, and ``locales/zh_CN/**/*.po``, the book's pages), so nothing the course shows is
  missing;
* the :data:`COMMON` most frequent hanzi of jieba's dictionary (a dependency of the book), so
  that a learner's own figure labels draw too;
* ASCII, Latin-1, general and CJK punctuation, full-width forms.

The sources are ``NotoSansCJK-Regular.ttc`` and ``-Bold.ttc`` of Debian's ``fonts-noto-cjk``
(``apt-get download fonts-noto-cjk``, then ``dpkg-deb -x``) or of the Noto CJK release; their
face "Noto Sans CJK SC" is used. The subset is renamed (:data:`FAMILY`): the OFL asks that a
modified font not pass for the original, and a learner's full system Noto keeps its own name
beside it. ``make test`` fails (tests/i18n/test_cjk_font.py) when a catalogue gains a character
the font lacks; run ``build`` again then. Needs only fontTools, which matplotlib installs."""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT_DIR = ROOT / "chipsim" / "viz" / "fonts"
FONT_FILE = FONT_DIR / "ChipsimCJKSans-Regular.otf"
WEIGHTS = ("Regular", "Bold")  # the faces shipped, as the source fonts name their style
FAMILY = "Chipsim CJK Sans"
SOURCE_FACE = "Noto Sans CJK SC"
#: How many of the most frequent hanzi (jieba's dictionary, weighted by word frequency) to keep.
COMMON = 4000
CATALOGUES = (ROOT / "chipsim" / "locales", ROOT / "locales")

_RANGES = (
    (0x20, 0x7E),  # ASCII
    (0xA0, 0xFF),  # Latin-1
    (0x2000, 0x206F),  # general punctuation: — – “ ” ‘ ’ …
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # mathematical operators: ≤ ≈ ×
    (0x3000, 0x303F),  # CJK symbols and punctuation: 、 。 「 」
    (0xFF00, 0xFFEF),  # full-width forms: ， ： （ ）
)


def is_cjk(char: str) -> bool:
    """A character no Latin font draws: CJK ideographs, punctuation, full-width forms."""
    return ord(char) >= 0x2E80


def catalogue_characters() -> set[str]:
    """Every CJK character of the course's Chinese catalogues (``*.po`` under zh_CN)."""
    found: set[str] = set()
    for base in CATALOGUES:
        for po in sorted(base.glob("zh_CN/**/*.po")):
            found |= {c for c in po.read_text(encoding="utf-8") if is_cjk(c)}
    return found


def common_hanzi(count: int = COMMON) -> list[str]:
    """The ``count`` most frequent hanzi of jieba's dictionary, most frequent first."""
    import jieba

    freq: collections.Counter[str] = collections.Counter()
    words = Path(jieba.__file__).with_name("dict.txt")
    for line in words.read_text(encoding="utf-8").splitlines():
        word, weight, *_ = line.split()
        for char in word:
            if 0x4E00 <= ord(char) <= 0x9FFF:
                freq[char] += int(weight)
    return [c for c, _ in freq.most_common(count)]


def wanted() -> set[str]:
    """The characters the shipped font covers."""
    chars = {chr(c) for lo, hi in _RANGES for c in range(lo, hi + 1)}
    return chars | set(common_hanzi()) | catalogue_characters()


def font_file(weight: str) -> Path:
    """The shipped file of one weight."""
    return FONT_DIR / f"{FAMILY.replace(' ', '')}-{weight}.otf"


def missing() -> list[str]:
    """Catalogue characters that a shipped font cannot draw (sorted)."""
    from fontTools.ttLib import TTFont

    lacking: set[str] = set()
    for weight in WEIGHTS:
        cmap = TTFont(font_file(weight), lazy=True).getBestCmap()
        lacking |= {c for c in catalogue_characters() if ord(c) not in cmap}
    return sorted(lacking)


def build(source: Path) -> Path:
    """Subset face ``SOURCE_FACE`` of ``source`` to :func:`wanted`; write it beside chipsim's
    fonts under the name of its weight (the source's style: Regular or Bold)."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    if source.suffix.lower() in (".ttc", ".otc"):
        faces = TTCollection(source).fonts
        font = next((f for f in faces if f["name"].getDebugName(1) == SOURCE_FACE), None)
        if font is None:
            raise SystemExit(f"{source}: no face named {SOURCE_FACE!r}")
    else:
        font = TTFont(source)
    options = subset.Options()
    options.layout_features = ["kern", "palt", "halt"]  # spacing only; no vertical text
    options.drop_tables += ["vhea", "vmtx", "VORG", "BASE"]
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in wanted()])
    subsetter.subset(font)
    weight = font["name"].getDebugName(2)
    if weight not in WEIGHTS:
        raise SystemExit(f"{source}: style {weight!r}; the course ships {', '.join(WEIGHTS)}")
    _rename(font, weight)
    out = font_file(weight)
    out.parent.mkdir(parents=True, exist_ok=True)
    font.recalcTimestamp = False  # the same source gives the same bytes
    font.save(out)
    return out


def _rename(font, weight: str) -> None:
    """Give the subset its own family name (OFL: a modified font must not pass as the original)."""
    postscript = f"{FAMILY.replace(' ', '')}-{weight}"
    full = f"{FAMILY} {weight}"
    names = {1: FAMILY, 2: weight, 3: f"{postscript};subset of {SOURCE_FACE}", 4: full,
             6: postscript, 16: FAMILY, 17: weight}  # fmt: skip
    table = font["name"]
    for record in list(table.names):
        if record.nameID in (16, 17):
            table.removeNames(nameID=record.nameID)
    for name_id, text in names.items():
        table.setName(text, name_id, 3, 1, 0x409)
        table.setName(text, name_id, 1, 0, 0)
    version = table.getDebugName(5) or ""
    table.setName(f"{version}; subset for chipsim", 5, 3, 1, 0x409)
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [postscript]
        top = cff.topDictIndex[0]
        top.FullName, top.FamilyName = full, FAMILY


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("build", help="subset a Noto Sans CJK font into chipsim/viz/fonts")
    make.add_argument("sources", type=Path, nargs="+", help="NotoSansCJK-{Regular,Bold}.ttc")
    sub.add_parser("check", help="list catalogue characters the shipped font lacks")
    args = parser.parse_args(argv)
    if args.command == "build":
        for source in args.sources:
            out = build(source)
            print(f"{out.relative_to(ROOT)}: {out.stat().st_size:,} bytes")
        return 0
    lacking = missing()
    if lacking:
        print(f"the shipped fonts lack {len(lacking)}: {''.join(lacking)}")
        return 1
    print("the shipped fonts draw every character of the Chinese catalogues")
    return 0


if __name__ == "__main__":
    sys.exit(main())
