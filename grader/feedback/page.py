"""Feedback pages that run nothing a learner wrote.

A feedback page is nbconvert's HTML of the autograded notebook: the grader replaces the
graded cells' outputs with its own, but every other cell keeps what the learner's kernel
displayed — an HTML output with a ``<script>``, an ``<img onerror=...>``, an SVG, a Markdown
cell of raw HTML. Opened in a browser, any of it would run with the page's rights (on a hub:
the hub's origin). :class:`SafeFeedbackExporter`, nbgrader's HTML exporter for feedback
(``c.GenerateFeedback.exporter_class``), closes both doors:

* learner-made HTML is sanitised with a maintained sanitiser (``nh3``, the Ammonia library):
  HTML outputs and the Markdown cells a learner could edit keep their text and harmless
  markup, never a script, an event handler or a ``javascript:`` link; output types a browser
  would run or that carry script (JavaScript, SVG, widgets, Markdown and LaTeX outputs) are
  dropped, keeping their plain text;
* the page carries a Content-Security-Policy that allows no script at all, only inline
  styles and ``data:`` images: whatever got past the sanitiser could not run anyway. The
  template's own scripts (MathJax from a CDN, which an offline page cannot load anyway) and
  web fonts are left out, so the browser has nothing to refuse.

Two things the page adds, so that it says what the grade says on any machine:

* a page with Chinese text (feedback in Chinese, a learner's Chinese comments) carries the
  course's own Chinese font (:data:`chipsim.viz.fonts.FAMILY`), cut down to the characters the
  page uses and embedded as a ``data:`` URL, after the page's own fonts: a machine without a
  system CJK font shows the hanzi, not boxes;
* scores are shown as the grade has them, to the thousandth and never rounded up, as the
  notebook's own explanation shows them (nbgrader's template rounds to the nearest hundredth,
  so 2.998 of 3 read "3.0"): a page never shows more points than the grade has
  (:func:`shown_score`).

Example:
    >>> clean_html('<b>ok</b><script>alert(1)</script><img src=x onerror="alert(1)">')
    '<b>ok</b><img src="x">'
    >>> with_policy("<html><head><title>t</title></head></html>")[:54]
    '<html><head><meta http-equiv="Content-Security-Policy"'
"""

from __future__ import annotations

import base64
import copy
import html
import io
import math
import re
from typing import Any

import nh3
from nbconvert.exporters import HTMLExporter

from chipsim.i18n import ENGLISH, N_, spoken, tr, use_language
from grader.scoring.credit import show_points

#: No script of any kind; styles inline (the page's own), images as data: URLs only.
POLICY = (
    "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:"
)
#: Long lines wrap inside their box (the grader's explanations, printed tables): nothing
#: runs off the page at any width. Tables get room between their cells (the template has
#: none for a Markdown table: "part | what you write" read "partwhat you write").
WRAP = (
    "<style>pre, .output_text pre, .output_stream pre {white-space: pre-wrap; "
    "overflow-wrap: anywhere;} img {max-width: 100%; height: auto;} "
    "table {border-collapse: collapse; margin: 0.5em 0;} "
    "th, td {padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: left;}</style>"
)
#: Output types kept as they are (the page shows them without running anything).
SAFE_MIME = frozenset({"text/plain", "image/png", "image/jpeg", "image/gif"})
#: Output types whose content is sanitised HTML.
HTML_MIME = "text/html"


def clean_html(text: str) -> str:
    """``text`` with everything that could run removed (nh3's defaults: no scripts, event
    handlers, styles that load, or ``javascript:`` URLs)."""
    return nh3.clean(text)


_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>", re.S | re.I)
_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}", re.I)


#: The page's own font stacks (nbgrader's feedback template: Bootstrap 3), with the course's
#: Chinese font after them: the browser takes each glyph from the first font that has it.
#: (``html body``: more specific than the template's own rules, which come later in the page.)
CJK_CSS = (
    'html body {{font-family: "Helvetica Neue", Helvetica, Arial, sans-serif, "{family}";}} '
    "html body code, html body kbd, html body pre, html body samp {{font-family: Menlo, Monaco, "
    'Consolas, "Courier New", monospace, "{family}";}}'
)


def is_cjk(char: str) -> bool:
    """A character a Latin font does not draw: CJK ideographs, punctuation, full-width forms."""
    return ord(char) >= 0x2E80


def cjk_font_style(page: str) -> str:
    """A ``<style>`` with the course's Chinese font, cut down to the CJK characters of
    ``page`` (a few hundred: tens of KB), or "" when the page has none."""
    chars = sorted({c for c in page if is_cjk(c)})
    if not chars:
        return ""
    from fontTools import subset

    from chipsim.viz.fonts import FAMILY, FONT_FILE

    options = subset.Options()
    options.name_IDs = ["*"]
    font = subset.load_font(str(FONT_FILE), options)
    cutter = subset.Subsetter(options)
    cutter.populate(unicodes=[ord(c) for c in chars])
    cutter.subset(font)
    data = io.BytesIO()
    subset.save_font(font, data, options)
    url = "data:font/otf;base64," + base64.b64encode(data.getvalue()).decode("ascii")
    face = f'@font-face {{font-family: "{FAMILY}"; src: url({url}) format("opentype");}}'
    return f"<style>{face} {CJK_CSS.format(family=FAMILY)}</style>"


def shown_score(value: Any, precision: int = 0, method: str = "common") -> str:
    """The template's ``round`` filter, which it applies to points alone (scores, and a late
    penalty, :func:`penalty_shown_whole`): the points as the grade has them
    (:func:`~grader.scoring.credit.show_points`), whatever precision the template asks for.

    Example:
        >>> shown_score(2.998, 2), shown_score(4.0, 2), shown_score(1.5, 2)
        ('2.998', '4', '1.5')
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return str(value)
    return show_points(value) if math.isfinite(value) else str(value)


def penalty_shown_whole(resources: dict) -> None:
    """A late penalty rounded *up* to the thousandth, in place: :func:`shown_score` rounds
    down, and a page must not show less taken away than was.

    Example:
        >>> resources = {"nbgrader": {"score": 3.3333, "late_penalty": 0.6667}}
        >>> penalty_shown_whole(resources)
        >>> shown_score(resources["nbgrader"]["late_penalty"], 2)
        '0.667'
    """
    grades = resources.get("nbgrader", {})
    penalty = grades.get("late_penalty")
    if isinstance(penalty, (int, float)) and math.isfinite(penalty):
        grades["late_penalty"] = math.ceil(penalty * 1000 - 1e-9) / 1000


#: nbconvert's alt text for an image without one.
_NO_ALT = "No description has been provided for this image"


#: What matplotlib prints for a figure, which says nothing of what it shows.
_FIGURE_REPR = re.compile(r"<Figure size \d+x\d+ with \d+ Axes>")


def page_language(nb: Any) -> str:
    """The language a graded notebook's feedback page speaks: the one the grader kept for it
    (:class:`~grader.course.sanitize.RememberLanguage`: the learner's kernel's), else English."""
    return spoken(nb.metadata.get("chipsim", {}).get("language")) or ENGLISH


def with_alt_text(page: str, nb: Any) -> str:
    """``page`` with each PNG's alt text taken from its output's plain text (the grader's
    pictures say what they show); a figure a notebook cell drew with matplotlib, whose plain
    text is "<Figure size 1100x352 with 1 Axes>", is "Figure drawn by cell 12 (under the
    heading …)" in the page's language instead (and the heading in it, of a bilingual cell).

    Example:
        >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
        >>> out = new_output("display_data", {"image/png": "iVBO", "text/plain": "<Figure size"
        ...                  " 640x480 with 1 Axes>"})
        >>> nb = new_notebook(cells=[new_markdown_cell("## Part 4: timeline\\n## 第 4 部分"),
        ...                          new_code_cell("plot()", outputs=[out])])
        >>> with_alt_text(f'<img src="data:image/png;base64,iVBO" alt="{_NO_ALT}">', nb)
        '<img alt="Figure drawn by cell 2 (under the heading Part 4: timeline)" src="data:image/png;base64,iVBO"/>'
    """
    alts = {}
    heading = ""
    language = page_language(nb)
    for number, cell in enumerate(nb.cells, 1):
        if cell.cell_type == "markdown":
            titles = re.findall(r"^#+\s+(.+?)\s*#*$", cell.source, re.M)
            ours = [t for t in titles if any(map(is_cjk, t)) == (language != ENGLISH)]
            heading = (ours or titles or [heading])[-1]  # a bilingual cell: the page's one
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            if isinstance(data.get("image/png"), str) and isinstance(data.get("text/plain"), str):
                alt = data["text/plain"]
                if _FIGURE_REPR.fullmatch(alt.strip()):
                    with use_language(language):
                        alt = tr("Figure drawn by cell {n}", n=number) + (
                            tr(" (under the heading {title})", title=heading) if heading else ""
                        )
                alts[data["image/png"].strip()] = alt
    if _NO_ALT not in page or not alts:
        return page
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(page, features="html.parser")
    for img in soup.select("img"):
        src = img.get("src", "")
        if img.get("alt") == _NO_ALT and src.startswith("data:image/png;base64,"):
            alt = alts.get(src.split(",", 1)[1].strip())
            if alt:
                img["alt"] = alt
    return str(soup)


def with_policy(page: str) -> str:
    """``page`` with the Content-Security-Policy meta tag first in its ``<head>``, and
    without the template's script elements and web fonts (the page needs neither, and the
    policy would refuse them; learner content is sanitised before: none of them is a
    learner's)."""
    page = _FONT_FACE.sub("", _SCRIPT.sub("", page))
    meta = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">' + WRAP
    meta += cjk_font_style(page)
    at = page.find("<head>")
    if at < 0:
        return meta + page
    at += len("<head>")
    return page[:at] + meta + page[at:]


#: The grader's own lines in a test cell (nbgrader's hidden-tests block): nothing for a learner.
_HIDDEN_BLOCK = re.compile(r"^### BEGIN HIDDEN TESTS\n.*?^### END HIDDEN TESTS\n?", re.S | re.M)


def sanitized(nb: Any) -> Any:
    """A copy of ``nb`` whose learner-made HTML cannot run (see the module docstring), and
    whose test cells show what the learner's showed (not the grader's hidden-tests block)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type == "markdown" and not meta.get("locked"):
            cell.source = clean_html(cell.source)
        if cell.cell_type == "code" and meta.get("grade"):
            cell.source = _HIDDEN_BLOCK.sub("", cell.source)
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not isinstance(data, dict):
                continue
            for mime in list(data):
                if mime == HTML_MIME and isinstance(data[mime], str):
                    data[mime] = clean_html(data[mime])
                elif mime not in SAFE_MIME:
                    del data[mime]
            if not data:
                data["text/plain"] = "[output removed from the feedback page]"
    return nb


#: nbgrader's feedback template writes these words around the scores, in English: each
#: pattern (its markup pins it to the template, never to a learner's text) and its message.
_TEMPLATE = tuple(
    (re.compile(pattern), message)
    for pattern, message in (
        (r'(?<=">)Test cell(?=</a>)', N_("Test cell")),
        (r'(?<=">)Coding free-response(?=</a>)', N_("Coding free-response")),
        (r'(?<=">)Written response(?=</a>)', N_("Written response")),
        (r'(?<=">)Task(?=</a>)', N_("Task")),
        (r'(?<=">)Comment(?=</a>)', N_("Comment")),
        (r'(?<=<span class="nbgrader-label">)Student\'s answer(?=</span>)', N_("Your answer")),
        (r'(?<=<span class="nbgrader-label">)Student\'s task(?=</span>)', N_("Your task")),
        (r'(?<=<span class="nbgrader-label">)Grade cell:(?= <code>)', N_("Test cell:")),
        (r'(?<=<span class="nbgrader-label">)Task:(?= <code>)', N_("Task:")),
        (r"(?<=<b>)Comments:(?=</b>)", N_("Comments:")),
        (r'(?<=<a href="#top">)\(Top\)(?=</a>)', N_("(Top)")),
        (r"Late submission penalty(?= \(Score: )", N_("Late submission penalty")),
    )
)
#: "(Score: 2 / 3)" after a heading or a contents entry; "Score: 2 / 3" before "(Top)".
_TEMPLATE_SCORE = re.compile(r"( ?)\(Score: (-?[\d.]+(?: / [\d.]+)?)\)")
_TEMPLATE_CELL_SCORE = re.compile(r'Score: ([\d.]+ / [\d.]+)(?= <a href="#top">)')
#: The template's space after "Grade cell:" and before "(Top)": a full-width colon or bracket
#: of a translation carries its own ("测试单元格：<code>", "2 / 3<a href="#top">（回到顶部）").
_SPACE_BESIDE_WIDE = re.compile(
    r'(<span class="nbgrader-label">[^<]*：) (?=<code>)| (?=<a href="#top">（)'
)


def template_in_language(page: str, language: Any) -> str:
    """``page`` with the words nbgrader's feedback template puts around the learner's cells
    and scores (the contents' "Test cell (Score: 2 / 3)", each graded cell's "Score: 2 / 3"
    and "(Top)", "Student's answer", "Grade cell:", the late penalty) in ``language``, the
    feedback's (the notebook's ``chipsim.language``): a Chinese page was Chinese everywhere
    but there. The numbers are untouched; any other ``language`` leaves the page as it is.

    Example:
        >>> template_in_language('<a href="#p1">Test cell</a> (Score: 2.5 / 3)', "zh_CN")
        '<a href="#p1">测试单元格</a>（得分：2.5 / 3）'
        >>> cell = '<span class="nbgrader-label">Grade cell: <code>p1</code></span>'
        >>> template_in_language(cell + 'Score: 2 / 3 <a href="#top">(Top)</a>', "zh_CN")
        '<span class="nbgrader-label">测试单元格：<code>p1</code></span>得分：2 / 3<a href="#top">（回到顶部）</a>'
    """
    language = spoken(language)
    if language in (None, ENGLISH):
        return page
    with use_language(language):
        for pattern, message in _TEMPLATE:
            page = pattern.sub(tr(message).replace("\\", "\\\\"), page)
        page = _TEMPLATE_SCORE.sub(_score_in_brackets, page)
        page = _TEMPLATE_CELL_SCORE.sub(lambda m: tr("Score: {score}", score=m.group(1)), page)
        return _SPACE_BESIDE_WIDE.sub(lambda m: m.group(1) or "", page)


#: The contents' entry of a test cell: its link (the cell's ``grade_id``) and nbgrader's words.
_CONTENTS_TEST_CELL = re.compile(r'<a href="#([\w-]+)">Test cell</a>')
#: An answer cell nbgrader found as released: its comment anchor, and the comment nbgrader
#: wrote for it ("No response.") at the foot of the same cell.
_UNANSWERED = re.compile(
    r'<a name="comment-([\w-]+)"></a>(?:(?!<a name="comment-).)*?<b>[^<]*</b> <p>(No response\.)</p>',
    re.S,
)


def with_part_names(page: str, language: Any) -> str:
    """``page`` with each contents entry of a course part's test cell named by its part, in
    ``language``: nbgrader's template lists every test cell as "Test cell (Score: 2 / 3)",
    and a learner could not tell which line was which part without following the links.
    A cell that is not a course part keeps the template's words. An answer cell left as
    released is named so in the contents (the template's bare "Comment") and at its foot
    (nbgrader's "No response.").

    Example:
        >>> with_part_names('<a href="#fusion_chains">Test cell</a> (Score: 3 / 3)', "en")
        '<a href="#fusion_chains">fusion_chains: greedy fusion of elementwise chains</a> (Score: 3 / 3)'
        >>> page = ('<a href="#comment-p1_code">Comment</a> <a name="comment-p1_code"></a>'
        ...         '<pre>...</pre><b>Comments:</b> <p>No response.</p>')
        >>> print(with_part_names(page, "en"))
        <a href="#comment-p1_code">p1_code: no answer yet</a> <a name="comment-p1_code"></a><pre>...</pre><b>Comments:</b> <p>No answer yet: this cell is as it came in the exercise notebook.</p>
    """
    from grader.problems.parts import PARTS

    def named(match: re.Match) -> str:
        part = PARTS.get(match.group(1))
        if part is None:
            return match.group(0)
        name = html.escape(tr("{part}: {title}", part=part.id, title=tr(part.title)))
        return f'<a href="#{match.group(1)}">{name}</a>'

    with use_language(spoken(language) or ENGLISH):
        page = _CONTENTS_TEST_CELL.sub(named, page)
        for cell in {m.group(1) for m in _UNANSWERED.finditer(page)}:
            label = html.escape(tr("{cell}: no answer yet", cell=cell))
            page = page.replace(f'<a href="#comment-{cell}">Comment</a>',
                                f'<a href="#comment-{cell}">{label}</a>')  # fmt: skip
        said = tr("No answer yet: this cell is as it came in the exercise notebook.")
        return _UNANSWERED.sub(lambda m: m.group(0)[: m.start(2) - m.start(0)] + said + "</p>",
                               page)  # fmt: skip


def _score_in_brackets(match: re.Match) -> str:
    """The contents' "(Score: 2 / 3)", translated (a full-width bracket has its own space)."""
    text = tr("(Score: {score})", score=match.group(2))
    return text if text.startswith("（") else match.group(1) + text


class SafeFeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter, on a sanitised notebook, under a no-script policy; scores
    as the grade has them (:func:`shown_score`), Chinese text in the course's font."""

    def _preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        nb, resources = super()._preprocess(nb, resources)  # nbgrader's GetGrades among them
        penalty_shown_whole(resources)
        return nb, resources

    def default_filters(self) -> Any:
        yield from super().default_filters()
        yield "round", shown_score  # the template rounds points only: show them as graded

    def from_notebook_node(self, nb: Any, resources: Any = None, **kw: Any) -> tuple[str, Any]:
        nb = sanitized(nb)
        output, resources = super().from_notebook_node(nb, resources, **kw)
        language = nb.metadata.get("chipsim", {}).get("language")
        page = with_part_names(with_alt_text(output, nb), language)
        return with_policy(template_in_language(page, language)), resources
