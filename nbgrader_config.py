"""nbgrader configuration of the course's autograded exercises (course ``chipsim-ch4``).

Layout (all paths relative to the course root, the folder holding this file):

* ``solutions/<assignment>/<notebook>.ipynb`` — the source, with solutions and hidden tests;
* ``gradebook/release/<assignment>/`` — nbgrader's release folder: the student version
  (``nbgrader generate_assignment``), regenerated whenever grading needs it. It is the
  grader's own: no learner works there;
* ``exercises/<assignment>/`` — the committed copy of the release that learners start from
  (``make exercises`` publishes it, and refuses to overwrite a learner's edits);
* ``gradebook/`` — everything produced while grading, git-ignored: ``release/``,
  ``submitted/``, ``autograded/``, ``feedback/`` and the sqlite gradebook ``gradebook.db``
  (or the database ``GRADEBOOK_URL`` names).

Autograding recomputes every chipsim score outside the learner's kernel: the preprocessor
``grader.course.rescore.RescoreAnswers`` runs after ``Execute`` and before
``SaveAutoGrades``. Learners' code runs in ``GuardedExecute`` (``grader.sandbox.execute``):
each notebook in a sandboxed kernel of its own (``grader.sandbox.modes``: its own
namespaces and uid, resource limits, the package without its reference passes, nothing of
the course visible), with a per-cell time limit. Grading refuses to start where no sandbox
is possible unless ``c.GuardedExecute.allow_unsandboxed = True`` (trusted notebooks only).
The hidden instances come from this course run's secret, ``gradebook/hidden_instances.key``
(created on first use; ``grader.problems.hidden``).
"""

import os

import nbgrader.validator
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from chipsim.text import BREAK, wrap
from grader.course.limit_output import LimitOutput
from grader.course.local_exchange import from_environment
from grader.course.rescore import RescoreAnswers
from grader.course.sanitize import RememberLanguage, RestoreTestCells
from grader.gradebook.db import configured_url
from grader.sandbox.execute import GuardedExecute
from grader.sandbox.limits import CELL_SECONDS
from grader.sandbox.modes import lock_down

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

ROOT = os.path.dirname(os.path.abspath(__file__))
GRADEBOOK = os.path.join(ROOT, "gradebook")
os.makedirs(GRADEBOOK, exist_ok=True)  # nbgrader needs the database's folder to exist
lock_down(ROOT)  # solutions/ and gradebook/: the instructor's alone, as root or not

c.CourseDirectory.course_id = "chipsim-ch4"
c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "gradebook/release"  # never where a learner works
c.CourseDirectory.submitted_directory = "gradebook/submitted"
c.CourseDirectory.autograded_directory = "gradebook/autograded"
c.CourseDirectory.feedback_directory = "gradebook/feedback"
# Feedback pages: learner-made HTML sanitised, and a policy that lets no script run
# (grader.feedback.page).
c.GenerateFeedback.exporter_class = "grader.feedback.page.SafeFeedbackExporter"
# Collecting from a hub's exchange copies submissions without following links (a learner's
# link to the solution or the secret is refused, never copied with the instructor's rights).
c.ExchangeFactory.collect = "grader.course.collect.SafeCollect"
# The secret the hidden instances are drawn from: one per course run (per gradebook).
c.HiddenInstances.secret_file = os.path.join(GRADEBOOK, "hidden_instances.key")
# `make lab` on a learner's own machine: a project-local exchange (gradebook/exchange), created
# and filled with the released assignments on demand, so the Assignments tab can fetch,
# validate and submit. Unset (a hub, the instructor's commands) the exchange stays nbgrader's.
_my_work = os.path.join(ROOT, "my-work")  # fetched notebooks go here
_local_exchange = from_environment(os.path.join(ROOT, "exercises"), _my_work, "chipsim-ch4")
if _local_exchange is not None:
    c.Exchange.root = str(_local_exchange)
    c.Exchange.assignment_dir = _my_work
# The gradebook: GRADEBOOK_URL (any SQLAlchemy URL, e.g. postgresql://user:pw@host/db) when set,
# else the sqlite file gradebook/gradebook.db, whose parallel writers wait up to 120 s for its
# lock instead of failing (grader.gradebook.db; README, "Grading a large class").
c.CourseDirectory.db_url = configured_url(GRADEBOOK)

# `nbgrader validate`'s summary when a test cell fails (the command's; the lab's Validate
# button shows the failed cells' messages under a heading of its own). A test cell fails
# whenever its part is below full points on the visible instances, which on an open challenge
# is the usual state of a working pass, so nbgrader's own "VALIDATION FAILED ... you WILL NOT
# receive full credit" says too little and alarms too much: say what it measured, and where
# the reasons are.
# nbgrader refills it to its width with textwrap, which counts a Chinese character as one
# column (it takes two) and breaks only at spaces: refill by terminal columns instead
# (chipsim.text.wrap). The Chinese lines break between words only (at the text's |, which
# becomes a zero-width space, U+200B, that wrap leaves out), and a number keeps its words (a
# no-break space, U+00A0).
nbgrader.validator.fill = lambda text, width=70: "\n".join(wrap(text, width))
c.Validator.failed_warning = (
    "{num_failed} PART(S) BELOW FULL POINTS on the visible instances: each one's message below "
    "says what it scored there and why. Your grade comes from hidden instances drawn when you "
    "are graded (for the fusion challenge, from its fixed benchmark): `make grade-mine` "
    "shows it. On an open challenge this is normal until your "
    "answer is as good as the reference; a part that says 0 points has a task still to do. "
    + (
        "有\u00a0{num_failed}\u00a0个部分|在|可见|实例上|未得|满分。|下面|每个|部分的|消息|写明了|"
        "它的|得分|和|原因。|你的|成绩|按|评分时|抽取的|隐藏|实例|计算|（融合|挑战|按|它|固定的|"
        "基准测试|计算），|运行 `make grade-mine` "
        "可以|看到。|在|开放|挑战中，|答案|赶上|参考解|之前|未得|满分|是|正常的。|"
        "显示\u00a00\u00a0分的|部分|还有|任务|没做完。\n"
    ).replace("|", BREAK)
)

# Released stubs: the line after each solution region raises NotImplementedError("<task>").
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE / 在这里写你的代码"}
# Per-cell limit: a cell past it gets an error output (0 for its part) and grading moves on.
# A challenge's test cell runs the learner's pass on every instance, hidden ones included (some
# 20 s for the model solution alone); 120 s (grader.sandbox.limits) leaves room for a loaded
# machine. Override per run: nbgrader autograde ... --GuardedExecute.timeout=30
c.GuardedExecute.timeout = CELL_SECONDS
# Validate runs the notebook with nbgrader's Execute, whose own limit is 30 s: a cell the
# grader gives 120 s would fail Validate with a bare CellTimeoutError. One limit for both.
c.Execute.timeout = CELL_SECONDS
c.GuardedExecute.sandbox = True
# The grader's notes for the instructor (static flags, sandbox) survive the metadata clean-up.
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {("language_info", "name"), ("chipsim",)}

# A learner's edits to test cells (metadata, deletion) are undone before nbgrader checks them.
c.Autograde.sanitize_preprocessors = [
    RememberLanguage,
    ClearOutput,
    DeduplicateIds,
    RestoreTestCells,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    GuardedExecute,
    RescoreAnswers,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
