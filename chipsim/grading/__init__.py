"""Grading support for the autograded exercises: the kernel proposes, the grader disposes.

The pieces, and who uses them:

* :mod:`~chipsim.grading.problems` — the pristine problem definitions. ``PARTS`` maps a part
  id (= the nbgrader ``grade_id`` of its test cell, e.g. ``"fusion_chains"``) to a
  :class:`~chipsim.grading.problems.Part`: its assignment, points, the learner's function
  names, extra forbidden names, reference strategies and its instances (id, kind, seeded
  builder, hidden flag). ``ASSIGNMENTS`` lists the parts of each notebook in order.
  :mod:`~chipsim.grading.graphs` holds the seeded graph builders.
* :func:`submit` (kernel side, :mod:`~chipsim.grading.submit`) — a test cell's last line,
  ``submit(part_id, *functions, hidden=HIDDEN)``: runs the learner's functions on the
  instances, catches their exceptions per instance, and returns an :class:`Answer` shown as
  an output with MIME type :data:`MIME` (the answer document of
  :mod:`~chipsim.grading.answer`) plus a provisional score. :func:`instances` gives the
  visible instances for exploring.
* :func:`score_answer` (:mod:`~chipsim.grading.grade`) — answer document -> :class:`PartScore`,
  computed from rebuilt instances only (:mod:`~chipsim.grading.checks`: right graph, valid,
  numerically equivalent, simulated, compared). ``PartScore.score`` is a plain float, rounded
  down, never above the points; ``PartScore.explain()`` is the feedback text.
* :func:`credit` and :func:`points_for` (:mod:`~chipsim.grading.scoring`) — the formula
  ``clip((naive - theirs) / (naive - reference), 0, 1)`` and safe rounding.
* :mod:`~chipsim.grading.static_check` — the allow-list of imports and the forbidden names
  (``check_cells``, ``reached_cells``), applied to the learner's editable cells.
* :mod:`~chipsim.grading.manifest` — ``Snapshot`` of chipsim's ``*.py`` files (sha256),
  ``changed()`` and ``restore()``.
* :mod:`~chipsim.grading.nbgrader_rescore` — ``RescoreAnswers``, the nbgrader autograde
  preprocessor (registered in ``nbgrader_config.py`` after ``Execute``). It imports nbgrader,
  so it is not imported here.

For whoever extends this (sandbox, red-team tests, parallel grading): the only data that
crosses from a learner's kernel to the grader is the answer document found in a graded
cell's outputs; the grader rebuilds everything else. Scoring one part is a pure function of
(part id, answer document, points), so parts and students can be graded in parallel
processes; baselines are cached per process (``checks.baseline``).

Example:
    >>> from chipsim.passes.fusion import Partition
    >>> ans = submit("fusion_chains", lambda g, chip: Partition([[0]]), score=False)
    >>> score_answer(PARTS["fusion_chains"], ans.doc, points=3).score
    0.0
"""

from chipsim.grading.answer import MIME, decode, encode
from chipsim.grading.grade import score_answer
from chipsim.grading.problems import ASSIGNMENTS, CHIP, PARTS, Instance, Part, get_part
from chipsim.grading.scoring import InstanceScore, PartScore, credit, points_for
from chipsim.grading.submit import Answer, instances, submit

__all__ = [
    "ASSIGNMENTS",
    "Answer",
    "CHIP",
    "Instance",
    "InstanceScore",
    "MIME",
    "PARTS",
    "Part",
    "PartScore",
    "credit",
    "decode",
    "encode",
    "get_part",
    "instances",
    "points_for",
    "score_answer",
    "submit",
]
