"""The course's steps in nbgrader's pipeline, and the release learners start from.

* :mod:`.sanitize` — before nbgrader: the course's test cells restored, the learner's
  language remembered;
* :mod:`.rescore` — ``RescoreAnswers``: every score recomputed outside the kernel;
* :mod:`.static_check` — flags for the instructor (never a score); :mod:`.copies` — whether
  a learner's function is a reference implementation pasted from the package;
* :mod:`.release` — the release folder is the grader's; the learner's copies are theirs;
* :mod:`.collect` — nbgrader's collect, copying no link; :mod:`.local_exchange` — the
  Assignments tab on a learner's own machine.
"""
