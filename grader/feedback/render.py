"""Pictures and text for graded cells: yours beside the reference's, as notebook outputs.

Example:
    >>> out = result_output(1.5, execution_count=3)
    >>> out["output_type"], out["data"]["text/plain"]
    ('execute_result', '1.5')
"""

from __future__ import annotations

import base64
import html
import io
import warnings
from typing import Any

from chipsim.i18n import tr, use_language
from grader.scoring.partscore import PartScore


def result_output(score: float, execution_count: int | None = None) -> dict[str, Any]:
    """The ``execute_result`` nbgrader reads: a plain float's repr, nothing else."""
    return {
        "output_type": "execute_result",
        "execution_count": execution_count,
        "data": {"text/plain": repr(float(score))},
        "metadata": {},
    }


def text_output(text: str) -> dict[str, Any]:
    """A display_data output with the explanation as plain text and as HTML."""
    return {
        "output_type": "display_data",
        "data": {
            "text/plain": text,
            "text/html": f"<pre>{html.escape(text)}</pre>",
        },
        "metadata": {},
    }


def picture_output(score: PartScore) -> dict[str, Any] | None:
    """Yours beside the reference's where you lost the most: the counted instance with the
    least credit that has a picture (the first of them on a tie; a visible one when no
    counted instance has a picture), or None. None too when that instance lost nothing while
    the part lost points elsewhere (on an invalid answer, which has no picture: the part's
    explanation names it), so that a picture never shows a match where the part lost."""
    pictured = [s for s in score.counted_scores() if s.picture is not None] or [
        s for s in score.instances if s.picture is not None
    ]
    if not pictured:
        return None
    shown = min(pictured, key=lambda s: s.fraction)
    if shown.fraction >= 1 and score.fraction < 1:
        return None
    with warnings.catch_warnings(), use_language(score.language):  # the learner's language
        warnings.simplefilter("ignore")
        png = _draw(shown.instance, *shown.picture)
        timed = hasattr(shown.picture[0], "report")
        text = tr("{instance}: the timeline of your program above, the reference's below",
                  instance=shown.instance) if timed else tr(
            "{instance}: your memory plan on the left, the reference's on the right",
            instance=shown.instance)  # fmt: skip
    return {
        "output_type": "display_data",
        "data": {"image/png": png, "text/plain": text},
        "metadata": {},
    }


def _picture_rc() -> dict:
    """matplotlib's own defaults for every setting the course style changes: a feedback
    picture looks the same for every learner, whatever the grading process drew before it
    (a notebook run in the same process applies the course style to the whole process)."""
    import matplotlib as mpl

    from chipsim.viz.style import course_rc

    return {key: mpl.rcParamsDefault[key] for key in course_rc()}


def _draw(instance: str, theirs: Any, reference: Any) -> str:
    import matplotlib as mpl

    with mpl.rc_context(_picture_rc()):
        fig = figure(instance, theirs, reference)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=60, metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode()


def figure(instance: str, theirs: Any, reference: Any) -> Any:
    """The feedback picture: two timelines one above the other (each the full width, so a
    transformer's many kernels stay readable, with no rotated labels to run into the titles),
    or two memory plans side by side."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    timed = hasattr(theirs, "report")
    fig = Figure(figsize=(11, 6.4) if timed else (11, 3.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 1, sharex=True) if timed else fig.subplots(1, 2)
    for ax, obj, who in zip(axes, (theirs, reference), (tr("yours"), tr("reference")), strict=True):
        if timed:
            from chipsim.viz.timeline import plot_timeline

            # the axis in cycles, as the titles count them; names that fit their span
            plot_timeline(obj.report, ax=ax, max_labels=12, unit="cycles")
            kernels = len(obj.report.kernels)
            if hasattr(obj, "overlap"):  # one hand-written kernel: what its DMA overlapped
                title = tr("{who}: {cycles:,} cycles, DMA overlapped with compute {share:.0%} "
                           "of its time", who=who, cycles=obj.report.cycles,
                           share=obj.overlap)  # fmt: skip
            else:
                title = tr("{who}: {cycles:,} cycles, {kernels} kernels", who=who,
                           cycles=obj.report.cycles, kernels=kernels)  # fmt: skip
            ax.set_title(title, pad=6)
        else:
            title = tr("{who}: arena {bytes:,} B", who=who, bytes=obj.arena_size)
            obj.draw(ax=ax, labels=False, title=title)
    if not timed and axes[0].get_ylabel() == axes[1].get_ylabel():  # the same unit: one scale,
        top = max(ax.get_ylim()[1] for ax in axes)  # so a larger arena looks taller
        for ax in axes:
            ax.set_ylim(0, top)
    fig.suptitle(tr("instance {instance}", instance=instance))
    return fig
