"""A learner's feedback page in Chromium: every picture loads and none is squashed or overdrawn.

The page is produced without running the whole grader: the released notebook's challenge cell
gets the outputs the autograder writes (:func:`grader.course.rescore._rewrite`:
explanation, yours-beside-the-reference picture, score) for the reference pass's answer, and
is exported exactly as ``nbgrader generate_feedback`` (``make feedback``) exports it: nbconvert's
HTMLExporter with nbgrader's ``feedback`` template, the CSS header preprocessor, and the cell
scores that nbgrader's ``GetGrades`` would read from the gradebook.

The issue this guards: rotated kernel labels ran into the subplot titles, and a transformer's
many kernels squashed the timeline. tests/grading/test_grading_render.py checks the matplotlib
geometry; here the check is what the learner sees: the screenshot, the images' natural size.
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import nbformat
import pytest

from grader.feedback.page import SafeFeedbackExporter

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "grading"))
from feedback_pages import Grades, page_of  # noqa: E402
from hand_kernels import loop_nest  # noqa: E402  (a valid loop nest written by hand)

#: The one thing a feedback page fetches from outside: nbgrader's feedback template calls
#: nbconvert's ``mathjax()`` macro with its hard-coded CDN default (``HTMLExporter.mathjax_url``
#: does not reach it). Tests never touch the network, so it is answered locally with an empty
#: script; anything else from outside fails the test.
MATHJAX_CDN = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/"


def _answers():
    from chipsim.passes.fusion import fuse_elementwise_chains
    from chipsim.passes.memory.registry import greedy_by_size

    return {
        "fusion": ("fusion_challenge", fuse_elementwise_chains),
        "memory_planning": ("memory_challenge", greedy_by_size),
        # a learner's kernel (the code generator's own program is not data)
        "instruction_generation": ("instgen_challenge", lambda kb: loop_nest(kb, 16, 32)),
    }


def feedback_html(assignment: str) -> str:
    """The feedback page of a notebook whose challenge part holds the reference pass's answer."""
    from grader import PARTS, score_answer
    from grader.course.rescore import _rewrite
    from grader.notebook import _RUNNERS
    from grader.scoring.answer import encode

    part_id, fn = _answers()[assignment]
    part = PARTS[part_id]
    visible = [i.id for i in part.instances if not i.hidden]
    # the reference's own answers (a test cell would withhold fn: computed here, outside it)
    answers = {i.id: _RUNNERS[i.kind](i.build(), (fn,)) for i in part.visible()}
    doc = encode(part.id, answers)
    scored = score_answer(part, doc, points=part.points, required=visible)

    nb = nbformat.read(ROOT / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part_id)
    _rewrite(cell, scored)
    cell.metadata.nbgrader["score"] = scored.score

    return page_of(nb, assignment)


@pytest.fixture(scope="module")
def feedback_pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("feedback")
    pages = {}
    for assignment in _answers():
        path = folder / f"{assignment}.html"
        path.write_text(feedback_html(assignment), encoding="utf-8")
        pages[assignment] = path
    return pages


#: The smallest height/width a picture may have (grader.feedback.render.figure): two stacked
#: full-width timelines are 11 x 6.4 in (0.58), two memory plans side by side 11 x 3.4 in
#: (0.31). The memory challenge's first pictured instance may be either kind.
MIN_ASPECT = {"fusion": 0.5, "memory_planning": 0.25, "instruction_generation": 0.5}


@pytest.mark.parametrize("assignment", sorted(MIN_ASPECT))
def test_feedback_pictures_load_and_are_not_squashed(page, feedback_pages, assignment, tmp_path):
    path = feedback_pages[assignment]
    outside = []

    def answer_locally(route):
        outside.append(route.request.url)
        route.fulfill(status=200, content_type="text/javascript", body="")

    page.route(lambda url: not url.startswith(("file:", "data:")), answer_locally)
    page.goto(path.as_uri(), wait_until="networkidle")
    assert all(url.startswith(MATHJAX_CDN) for url in outside), outside
    page.screenshot(path=str(tmp_path / f"{assignment}-feedback.png"), full_page=True)

    images = page.eval_on_selector_all(
        "img",
        "imgs => imgs.map(i => ({src: i.src.slice(0, 40), ok: i.complete, alt: i.alt,"
        " w: i.naturalWidth, h: i.naturalHeight, shownW: i.clientWidth, shownH: i.clientHeight}))",
    )
    pictures = [i for i in images if i["src"].startswith("data:image/png")]
    assert pictures, f"{assignment}: the feedback page shows no picture"
    for img in images:
        assert img["ok"] and img["w"] > 0, f"{assignment}: an image did not load: {img}"
    for img in pictures:
        assert img["h"] >= MIN_ASPECT[assignment] * img["w"], f"{assignment}: squashed {img}"
        assert "No description" not in img["alt"] and img["alt"], f"{assignment}: alt {img}"
        assert not img["alt"].startswith("<Figure"), f"{assignment}: matplotlib's repr as alt"
        # as shown on the page (not only in the file): scaled, never distorted
        shown = img["shownH"] / img["shownW"]
        assert abs(shown - img["h"] / img["w"]) < 0.02, f"{assignment}: distorted {img}"

    text = page.locator("body").inner_text()
    assert "yours" in text and "reference" in text  # the explanation beside the picture
    assert page.errors == [], f"{assignment}: console errors: {page.errors}"
    assert os.path.getsize(tmp_path / f"{assignment}-feedback.png") > 0


def test_the_fusion_picture_titles_are_clear_of_the_kernel_labels(feedback_pages, tmp_path):
    """Decode the page's picture: the band under each subplot title holds only the title.

    The title rows are found in the PNG itself (the rows with dark title text above each axes
    frame); a rotated kernel label running into a title would put ink in the margin between
    the title and the frame, or merge with the title's line of text: both must stay clear.
    """
    import io

    import numpy as np
    from matplotlib.image import imread

    html = feedback_pages["fusion"].read_text(encoding="utf-8")
    start = html.index("data:image/png;base64,") + len("data:image/png;base64,")
    png = base64.b64decode(html[start : html.index('"', start)])
    pixels = imread(io.BytesIO(png))[..., :3]
    (tmp_path / "fusion-picture.png").write_bytes(png)
    ink = (pixels.mean(axis=2) < 0.5).sum(axis=1)  # dark pixels per row
    width = pixels.shape[1]
    frames = np.flatnonzero(ink > 0.6 * width)  # the axes' top and bottom edges: long lines
    assert len(frames) >= 2, "no axes frames found in the feedback picture"
    tops = [int(r) for r in frames if r - 1 not in frames][::2]  # top edge of each axes
    assert len(tops) == 2, f"expected two stacked timelines, found frame rows {frames}"
    for top in tops:
        above = ink[max(0, top - 60) : top]
        rows = np.flatnonzero(above > 0)
        assert rows.size, "no title above a timeline"
        bottom = rows[-1]  # the title's last row of ink; under it, clear space to the frame
        first = bottom
        while first > 0 and above[first - 1] > 0:
            first -= 1
        assert top - (max(0, top - 60) + bottom) > 2, "a label runs into the gap under a title"
        # one line of title text, with clear space above it too: nothing ran into it
        assert bottom - first + 1 <= 16, f"ink merged with a title: {bottom - first + 1} rows"
        assert first >= 2 and not above[first - 2 : first].any(), "no clear space above a title"


ATTACKS = {
    "text/html": "<p id='kept'>my table</p><script>document.title = 'pwned-script'</script>"
    "<img src='data:,x' onerror=\"document.body.dataset.pwned = 'onerror'\">"
    "<a id='link' href='javascript:document.title=1'>x</a>",
    "application/javascript": "document.title = 'pwned-js'",
    "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' "
    "onload=\"document.title='pwned-svg'\"/>",
}


def test_a_learners_script_never_runs_on_the_feedback_page(page, tmp_path):
    """Script outputs, event handlers, SVG and raw HTML in a learner's Markdown cell: the page
    is sanitised (nh3) and forbids every script (Content-Security-Policy), in Chromium."""
    nb = nbformat.read(ROOT / "exercises" / "fusion" / "fusion.ipynb", as_version=4)
    mine = nbformat.v4.new_code_cell("display(HTML(...))")
    mine.outputs = [nbformat.v4.new_output("display_data", data=dict(ATTACKS))]
    note = nbformat.v4.new_markdown_cell(
        "My notes <script>document.title = 'pwned-markdown'</script>"
        "<img src='data:,y' onerror=\"document.body.dataset.pwned = 'markdown'\">"
    )
    nb.cells[2:2] = [mine, note]
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader["score"] = 0.0
    exporter = SafeFeedbackExporter()
    exporter.register_preprocessor(Grades(), enabled=True)
    html, _ = exporter.from_notebook_node(
        nb, resources={"nbgrader": {"notebook": "fusion", "assignment": "fusion"}}
    )
    path = tmp_path / "attacked.html"
    path.write_text(html, encoding="utf-8")
    page.route(lambda url: not url.startswith(("file:", "data:")), lambda r: r.abort())
    page.goto(path.as_uri(), wait_until="networkidle")
    assert "pwned" not in page.title()
    assert page.evaluate("document.body.dataset.pwned") is None
    assert "my table" in page.locator("body").inner_text()  # the harmless HTML stays
    assert "Content-Security-Policy" in html and "pwned-js" not in html
    assert "onerror" not in html.split("Content-Security-Policy", 1)[1]


def test_the_page_shows_the_points_the_grade_has():
    """nbgrader's template rounds to the nearest 0.01 (2.998 of 3 read "3.0"); the page
    shows the grade's own points, to the thousandth, as the notebook's explanation does."""
    nb = nbformat.v4.new_notebook()
    for grade_id, score in (("a", 2.998), ("b", 1.5)):
        meta = {"grade": True, "solution": False, "grade_id": grade_id, "points": 3,
                "score": score}  # fmt: skip
        nb.cells.append(nbformat.v4.new_code_cell("1", metadata={"nbgrader": meta}))
    html = page_of(nb, "scores")
    assert "Score: 4.498 / 6)" in html, html[-3000:]  # 4.498 in all
    assert "Score: 2.998 / 3" in html and "Score: 1.5 / 3" in html
    assert "Score: 3.0" not in html and "4.5 / 6" not in html and "3 / 3" not in html


def test_the_page_draws_chinese_with_the_course_font(fontless_browser, fonts_used, feedback_pages):
    """The notebooks (and Chinese feedback) hold hanzi; on a machine without a CJK font the
    page's own embedded subset of the course font draws them (no boxes)."""
    tab = fontless_browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(feedback_pages["fusion"].as_uri(), wait_until="load")
    marked = tab.evaluate(
        """() => {
          const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            if (/[\u4e00-\u9fff]/.test(n.data)) {
              n.parentElement.setAttribute('data-hanzi', '1');
              return n.data.trim().slice(0, 40);
            }
          }
          return null;
        }"""
    )
    assert marked, "the page has no Chinese text to draw"
    used = fonts_used(tab, ("[data-hanzi]",))["[data-hanzi]"]
    assert used.get("Chipsim CJK Sans", 0) > 0, (marked, used)
