"""One long-lived autograde worker: ``nbgrader autograde``, one submission at a time, on request.

:mod:`.pool` starts one worker per core and hands each the next submission whenever it
finishes one, so the cores stay busy until the queue is empty and nbgrader's start-up (its
imports, the course config, the chipsim snapshot, the reference baselines) is paid once per
worker, not once per submission. Each submission is graded exactly as ``nbgrader autograde
<assignment> --student <student>`` grades it: this app *is* nbgrader's ``AutogradeApp``
(same config files, flags and ``--Class.trait=value`` options), with a loop in place of the
single run.

Protocol, one JSON object per line:

- the parent writes ``{"student": "s01", "assignment": "fusion"}`` on the worker's stdin;
- the worker answers ``{"student": ..., "assignment": ..., "ok": true|false, "log": "..."}``
  on the stdout it was started with. Everything else (nbgrader's log, and the kernels it starts)
  goes to stderr: the worker moves its stdout to a private descriptor before any kernel starts,
  so nothing a learner's kernel prints can be taken for an answer.

The worker stops at the end of its stdin. Example (from the course root)::

    printf '{"student": "alice", "assignment": "fusion"}\\n' | \\
        python -m grader.gradebook.worker --force
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import traceback
from typing import TextIO

from nbgrader.apps.autogradeapp import AutogradeApp
from nbgrader.apps.baseapp import NbGrader
from nbgrader.converters import Autograde, NbGraderException
from nbgrader.utils import temp_attrs

#: How much of a failed job's log travels back to the parent.
LOG_TAIL = 3000


def private_stdout() -> TextIO:
    """A writer on the original stdout; fd 1 itself now points at stderr.

    The duplicate is not inheritable (Python's default), so kernels started later write their
    own stdout to stderr and cannot reach the protocol channel.
    """
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    return channel


class AutogradeWorker(AutogradeApp):
    """``nbgrader autograde`` that grades the (student, assignment) pairs read from stdin."""

    name = "chipsim-autograde-worker"
    description = "Autograde the submissions named on stdin, one JSON line each"

    def start(self) -> None:
        NbGrader.start(self)  # authenticator and exchange, as AutogradeApp.start sets up
        channel = private_stdout()
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                job = json.loads(line)
                student, assignment = str(job["student"]), str(job["assignment"])
            except (ValueError, KeyError, TypeError):
                self._answer(channel, {"ok": False, "log": f"not a job: {line[:200]!r}"})
                continue
            ok, log = self.grade(student, assignment)
            self._answer(
                channel,
                {"student": student, "assignment": assignment, "ok": ok, "log": log},
            )

    def grade(self, student: str, assignment: str) -> tuple[bool, str]:
        """Autograde one submission; ``(succeeded, the log's tail when it did not)``."""
        buffer = io.StringIO()
        handler = logging.StreamHandler(buffer)
        handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
        self.log.addHandler(handler)
        try:
            with temp_attrs(self.coursedir, assignment_id=assignment, student_id=student):
                Autograde(coursedir=self.coursedir, parent=self).start()
            return True, ""
        except NbGraderException:
            return False, buffer.getvalue()[-LOG_TAIL:]
        except Exception:  # any failure is this job's: report it and take the next job
            return False, (buffer.getvalue() + traceback.format_exc())[-LOG_TAIL:]
        finally:
            self.log.removeHandler(handler)

    @staticmethod
    def _answer(channel: TextIO, message: dict) -> None:
        channel.write(json.dumps(message) + "\n")


def die_with_parent() -> None:
    """Linux: this worker is killed when the grading process that started it dies (a shard
    killed mid-run leaves no worker grading behind its back; its re-run grades what was left)."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the line above
        os._exit(1)


main = AutogradeWorker.launch_instance

if __name__ == "__main__":
    die_with_parent()
    main()
