"""``nbgrader collect``, safe as root: a learner's submission is copied without following links.

On a hub, learners *Submit* into the exchange's inbound folder, and the instructor (often
root) runs ``nbgrader collect``, which copies each submission with ``shutil.copytree``: a link
in it is followed with the instructor's rights, so a learner's ``fusion.ipynb`` that points
at the instructor's solution is collected — and graded — as theirs, and a link to the course
secret or the gradebook is copied beside it. :class:`SafeCollect` is nbgrader's own collect
step (which submission is the latest, due dates, updates) with one change: the copy. It
refuses a submission that is a link, copies the rest with :func:`~grader.sandbox.files.copy_tree`
(never
following a link, opening no FIFO or device, within a size budget) and says what it left out.

Registered in ``nbgrader_config.py``::

    c.ExchangeFactory.collect = "grader.course.collect.SafeCollect"
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect

from grader.sandbox import files


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, copying each submission without following links."""

    def do_copy(self, src: str, dest: str, log=None) -> None:  # noqa: ARG002 - nbgrader's API
        try:
            st = os.lstat(src)
        except OSError as exc:
            self.log.error("not collected: %s (%s)", src, exc.strerror)
            return
        if not stat.S_ISDIR(st.st_mode):
            self.log.error("not collected: %s is a link or not a folder", src)
            return
        copied = files.copy_tree(Path(src), Path(dest), mode=0o644)
        for why in copied.skipped:
            self.log.warning("collect %s: left out %s", os.path.basename(src), why)
        if copied.skipped and log is not None:
            log.warning("some files of %s were not collected", src)
