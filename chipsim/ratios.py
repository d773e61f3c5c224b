"""How much faster one thing is than another, said in the learner's language.

One home for a speed ratio in words, so that every page says it the same way in every edition.
English has "2.4 times as fast" and "5% faster"; Chinese must not say "快了 2.4 倍" (read as
3.4 times as fast) or "快了 1.05 倍" (read as about twice as fast). :func:`faster` picks the
form from the value, with the same thresholds in every language:

==========================  ==============================  =======================
ratio (baseline / this)     English                         中文
==========================  ==============================  =======================
at least 2                  2.4 times as fast as eager      速度是动态图的 2.4 倍
1.005 to 2                  5% faster than eager            比动态图快 5%
within 0.5% of 1            about as fast as eager          和动态图差不多快
down to 1 / 2               5% slower than eager            比动态图慢 5%
below 1 / 2                 2.4 times as slow as eager      耗时是动态图的 2.4 倍
==========================  ==============================  =======================

The words are ``tr()`` messages of ``chipsim.po``; ``than`` is given already translated
(``tr("eager execution")``).

Example:
    >>> faster(4.91, than="eager")
    '4.9 times as fast as eager'
    >>> faster(1.05)
    '5% faster'
    >>> from chipsim.i18n import use_language
    >>> with use_language("zh_CN"):
    ...     faster(4.91, than="动态图"), faster(1.05, than="动态图"), faster(1 / 3.0)
    ('速度是动态图的 4.9 倍', '比动态图快 5%', '耗时是原来的 3.0 倍')
"""

from __future__ import annotations

from chipsim.i18n import tr

#: From here up a ratio is said as "N times as fast"; below it, as a percentage.
TIMES = 2.0
#: Within this much of 1 the two are "about as fast".
SAME = 0.005


def percent(share: float) -> str:
    """``0.053`` -> ``"5.3%"``, ``0.05`` -> ``"5%"``, ``0.23`` -> ``"23%"`` (two digits at most)."""
    value = 100 * share
    return f"{value:.2g}%" if value < 9.95 else f"{value:.0f}%"


def faster(ratio: float, than: str = "") -> str:
    """``ratio`` = the baseline's time / this one's time, as words in the current language.

    Args:
        ratio: how many times as fast (above 1) or as slow (below 1) this is.
        than: what it is compared with, already translated; without it the comparison is
            with "before" (Chinese: 原来).

    Raises:
        ValueError: for a ratio that is not a positive number.
    """
    if not ratio > 0 or ratio == float("inf"):
        raise ValueError(f"a speed ratio must be a positive number, not {ratio!r}")
    if ratio >= TIMES:
        if than:
            return tr("{ratio:.1f} times as fast as {than}", ratio=ratio, than=than)
        return tr("{ratio:.1f} times as fast", ratio=ratio)
    if ratio >= 1 + SAME:
        if than:
            return tr("{percent} faster than {than}", percent=percent(ratio - 1), than=than)
        return tr("{percent} faster", percent=percent(ratio - 1))
    if ratio > 1 / (1 + SAME):
        return tr("about as fast as {than}", than=than) if than else tr("about as fast")
    slow = 1 / ratio
    if slow < TIMES:
        if than:
            return tr("{percent} slower than {than}", percent=percent(slow - 1), than=than)
        return tr("{percent} slower", percent=percent(slow - 1))
    if than:
        return tr("{ratio:.1f} times as slow as {than}", ratio=slow, than=than)
    return tr("{ratio:.1f} times as slow", ratio=slow)
