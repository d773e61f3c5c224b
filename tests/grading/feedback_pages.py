"""A feedback page as nbgrader renders it: the course's exporter with nbgrader's feedback
template, the scores taken from the cells' metadata (what GetGrades puts in from the
gradebook). Shared by the grading and the browser tests."""

from __future__ import annotations

import copy
from pathlib import Path

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor, Preprocessor
from traitlets.config import Config

from grader.feedback.page import SafeFeedbackExporter


class Grades(Preprocessor):
    """What nbgrader's GetGrades puts in from the gradebook: per-cell and total scores."""

    def preprocess(self, nb, resources):
        total = points = 0.0
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                meta.setdefault("score", 0.0)
                total += meta["score"]
                points += meta["points"]
        resources["nbgrader"].update(score=total, max_score=points, late_penalty=0)
        return nb, resources


def page_of(nb, name: str) -> str:
    """``nb``'s feedback page, by the exporter nbgrader_config.py makes nbgrader use, with
    nbgrader's feedback template (the scores from the cells' metadata, as GetGrades puts them)."""
    from nbgrader import server_extensions

    templates = Path(server_extensions.__file__).parent / "formgrader" / "templates"
    bootstrap = templates.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [str(templates)]
    c.HTMLExporter.extra_template_paths = [str(bootstrap)]
    exporter = SafeFeedbackExporter(config=c)
    exporter.register_preprocessor(Grades(), enabled=True)
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor(), enabled=True)
    resources = {"nbgrader": {"notebook": name, "assignment": name}}
    html, _ = exporter.from_notebook_node(copy.deepcopy(nb), resources=resources)
    return html
