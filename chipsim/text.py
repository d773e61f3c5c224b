"""Text laid out in terminal columns, in any language: a CJK character takes two.

Printed tables and the grader's explanation lines are padded and wrapped by what a terminal
(or the browser's monospace font) shows, not by ``len``: :func:`pad`, :func:`wrap`,
:func:`text_width`, and :data:`BREAK`, the mark a translator puts where a Chinese line may
break. :mod:`chipsim.i18n` translates; this module only measures and cuts, in no language
of its own.
"""

from __future__ import annotations

import re
import unicodedata


def pad(text: str, width: int, *, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal columns, a wide (CJK) character
    counting as two, so that printed tables stay aligned in every language.

    Example:
        >>> pad("周期", 6) + "|", pad("cycles", 8, right=True) + "|"
        ('周期  |', '  cycles|')
    """
    fill = " " * max(0, width - text_width(text))
    return fill + text if right else text + fill


#: Where a translation may break a line of CJK text (a zero-width space): a translator puts
#: it between words, and :func:`wrap` then never cuts a word in two (Chinese has no spaces,
#: and a cut between any two characters can split 运行 or 代码). :func:`chipsim.i18n.tr` leaves
#: the marks out; :func:`chipsim.i18n.tr_lines` wraps at them.
BREAK = "\u200b"


#: Marks that never start a line (。，”…) or end one (（“「): they stay with the character
#: beside them.
_CLOSERS, _OPENERS = "。，、：；！？）」』》】〉］”’…", "（「『《【〈［“‘"
#: The pieces :func:`wrap` never cuts inside (a no-break space joins two into one), for text
#: without and with :data:`BREAK` marks; a line may end after any of them, and at a space.
_PIECES = tuple(
    re.compile(rf"\u00a0*(?:{atom})(?:\u00a0+(?:{atom}))*\u00a0*|[^\S\u00a0]+|\u00a0+|\u200b")
    for atom in (
        rf"[{_OPENERS}]*(?:[\u2e80-\uffef]|[^\s\u2e80-\uffef]+)[{_CLOSERS}]*",
        r"[^\s\u200b]+",
    )
)


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` terminal columns (a CJK character is two): cut at
    spaces, or between any two CJK characters; a longer word is cut where the width ends.
    Text that marks its breaks (:data:`BREAK`) is cut only there and at spaces, and the
    marks are left out of the lines. Never cut: at a no-break space (U+00A0), before a
    closing mark (。，）”…), after an opening one (（“).

    Example:
        >>> wrap("read once per kernel: streamed", 16)
        ['read once per', 'kernel: streamed']
        >>> wrap("每个内核函数只读一次", 8)
        ['每个内核', '函数只读', '一次']
        >>> wrap("每个\u200b内核函数\u200b只读一次", 8)
        ['每个', '内核函数', '只读一次']
        >>> wrap("显示\u00a00\u00a0分的部分。", 9), wrap("一二三四五六。七八", 12)
        (['显示\xa00\xa0分', '的部分。'], ['一二三四五', '六。七八'])
    """
    marked = BREAK in text
    pieces = _PIECES[marked]
    lines: list[str] = []
    line = ""
    for token in pieces.findall(text):
        if token == BREAK:
            continue
        if token.isspace() and "\u00a0" not in token:
            line += " " if line else ""
            continue
        while text_width(token) > width:  # a word wider than a line: cut it
            if line.strip(" ") and text_width(token[:1]) > width - text_width(line):
                lines.append(line.rstrip(" "))  # not even its first character fits here
                line = ""
            room = width - text_width(line)
            cut = max(1, max(i for i in range(len(token) + 1) if text_width(token[:i]) <= room))
            while cut > 1 and token[cut] in _CLOSERS:  # 。 does not start the next line
                cut -= 1
            if (line + token[:cut]).strip(" "):
                lines.append((line + token[:cut]).rstrip(" "))
            line, token = "", token[cut:]
        if text_width(line + token) > width and line.strip(" "):
            lines.append(line.rstrip(" "))
            line = ""
        line += token
    if line.strip(" ") or not lines:
        lines.append(line.rstrip(" "))
    return lines


def text_width(text: str) -> int:
    """Terminal columns ``text`` takes: a wide (CJK) character counts as two, a
    :data:`BREAK` none."""
    return sum(
        2 if unicodedata.east_asian_width(ch) in "WF" else 0 if ch == BREAK else 1 for ch in text
    )
