"""The course machinery: the grader of the autograded exercises, beside the teaching package.

chipsim is what learners read to see how a compiler and a chip work; this package is how the
course grades them, and chipsim never imports it. The kernel proposes, the grader disposes:
a learner's notebook runs in a sandbox and only hands over its answers, as data; the grader
rebuilds every problem itself and scores the answers in its own process.

Sub-packages, by concept:

* :mod:`grader.problems` — the parts of each exercise, their instance families, the course
  secret and the per-submission draw of hidden instances;
* :mod:`grader.scoring` — answers, checks, the credit curves, a part's points;
* :mod:`grader.sandbox` — the kernel's sandbox, the package view it sees, its limits;
* :mod:`grader.course` — the course's steps in nbgrader's pipeline, the release, collection;
* :mod:`grader.gradebook` — the gradebook database, the jobs, the pool, shards, the report;
* :mod:`grader.feedback` — pictures, feedback pages, the leaderboard;
* :mod:`grader.cli` — ``make grade``, ``make feedback``, ``make grade-mine``, ``make exercises``.

What a notebook's test cell calls is here, at the top: :func:`submit` runs the learner's
functions on a part's instances and returns an :class:`Answer` (the answer document plus a
provisional score on the visible instances); :func:`instances` gives the instances to explore.
:func:`score_answer` scores a document for one part, from rebuilt instances only.

Example:
    >>> from chipsim.passes.fusion import Partition
    >>> ans = submit("fusion_chains", lambda g, chip: Partition([[0]]), score=False)
    >>> score_answer(PARTS["fusion_chains"], ans.doc, points=3).score
    0.0
"""

from grader.notebook import Answer, instances, submit
from grader.problems.part import Instance, Part
from grader.problems.parts import ASSIGNMENTS, CHIP, PARTS, get_part
from grader.scoring.answer import MIME, decode, encode
from grader.scoring.credit import InstanceScore, credit, points_for
from grader.scoring.grade import score_answer
from grader.scoring.partscore import PartScore

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
