"""The problems: each exercise's parts, their instance families, and how hidden ones are drawn.

* :mod:`.part` — what a part (one graded test cell) and an instance (a family and a seed:
  visible, hidden, or a benchmark's) are, and how a part declares them;
* :mod:`.parts` — ``PARTS`` (part id = the test cell's nbgrader ``grade_id``) and
  ``ASSIGNMENTS``: points, the learner's functions, the references, the instances;
* :mod:`.families` — the seeded families of hidden instances (their strata), built on the
  teaching workloads of :mod:`chipsim.workloads`, and how a stratum redraws until its outcome
  holds;
* :mod:`.kernels` — the instruction-generation exercise's one-kernel families;
* :mod:`.items` — the exact-answer families: part 1's classification items, the liveness
  problems;
* :mod:`.hidden` — the course secret and the per-submission draw of hidden instances;
* :mod:`.data` — a hidden instance as data, the only form a learner's kernel receives.
"""

from grader.problems.part import Instance, Part
from grader.problems.parts import ALIGNMENT, ASSIGNMENTS, CHIP, PARTS, get_part

__all__ = ["ALIGNMENT", "ASSIGNMENTS", "CHIP", "PARTS", "Instance", "Part", "get_part"]
