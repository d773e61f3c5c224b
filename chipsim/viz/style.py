"""One matplotlib style for every course figure: one palette, readable font sizes.

Example:
    >>> from chipsim.viz.style import apply_style, PALETTE
    >>> apply_style()
    >>> len(PALETTE) >= 8
    True
"""

from __future__ import annotations

#: Okabe-Ito colour-blind-safe palette (Okabe & Ito, "Color Universal Design", 2008).
PALETTE: tuple[str, ...] = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)

#: A fixed colour per execution unit, used by timelines and rooflines alike.
UNIT_COLORS: dict[str, str] = {
    "host": "#999999",
    "alu": PALETTE[4],
    "mac": PALETTE[3],
    "simd": PALETTE[2],
    "tensor": PALETTE[0],
    "dma": PALETTE[1],
}


def course_rc() -> dict:
    """The matplotlib settings of the course style (what :func:`apply_style` sets)."""
    from cycler import cycler

    return {
        "figure.figsize": (8, 4),
        "figure.dpi": 110,
        "savefig.bbox": "tight",
        "font.size": 11,
        "axes.titlesize": 12,
        "axes.labelsize": 11,
        "legend.fontsize": 10,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.prop_cycle": cycler(color=list(PALETTE)),
    }


def apply_style() -> None:
    """Set matplotlib defaults for course figures (call once per notebook)."""
    import matplotlib as mpl

    mpl.rcParams.update(course_rc())


def color_for(index: int) -> str:
    """The palette colour for the ``index``-th series (wraps around)."""
    return PALETTE[index % len(PALETTE)]
