"""Scoring an answer, from pristine problems only: the kernel proposes, the grader disposes.

* :mod:`.answer` — the answer document (plain JSON data a test cell hands over);
* :mod:`.checks` — one answer for one instance: valid, equivalent, simulated, compared;
* :mod:`.references` — the grader's own numbers for an instance (reference and naive);
* :mod:`.equivalence` — the numerical-equivalence check against the interpreter;
* :mod:`.credit` — the partial-credit curve of an instance, points, and family means;
* :mod:`.partscore` — a part's score: which instances count, the benchmark's check, and
  the explanation a learner reads;
* :mod:`.grade` — :func:`score_answer`: a document for one part, every instance;
* :mod:`.epilogue` — the grader's own reference for the epilogue part (withheld in kernels);
* :mod:`.spread` — how a notebook's points move with the draw of hidden instances.
"""

from grader.scoring.credit import InstanceScore, credit, points_for
from grader.scoring.grade import score_answer
from grader.scoring.partscore import PartScore

__all__ = ["InstanceScore", "PartScore", "credit", "points_for", "score_answer"]
