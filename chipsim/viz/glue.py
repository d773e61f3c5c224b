"""``glue``: hand a value computed in a chapter's cell to the prose around it.

The book writes every number an experiment produces with ``{glue:text}`name``` instead of
typing it. MyST-NB reads glued values from a cell's outputs; this function writes exactly
those outputs (the ``scrapbook`` metadata MyST-NB looks for), so a chapter needs no import of
``myst_nb``: downloaded as a notebook, it runs top to bottom wherever ``chipsim`` and a
Jupyter kernel are installed.

Example:
    >>> glue("speedup", 2.5, display=False)  # outside IPython: nothing to show, no error
"""

from __future__ import annotations

from typing import Any

#: The prefix MyST-NB (and papermill's scrapbook before it) puts on a hidden glued output.
GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, display: bool = True) -> None:
    """Glue ``value`` under ``name`` for the book's ``{glue}`` roles and directives.

    Args:
        name: the name the prose refers to (unique within the chapter).
        value: anything IPython can display (a number, a string, ``Markdown``, a figure).
        display: also show the value in the notebook (``False``: hidden, only for the book).
    """
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display as ipy_display
    except ImportError:  # plain Python, no IPython: there is no notebook to glue into
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
