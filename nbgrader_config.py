"""nbgrader configuration of the course's autograded exercises (course ``chipsim-ch4``).

Layout (all paths relative to the course root, the folder holding this file):

* ``solutions/<assignment>/<notebook>.ipynb`` — the source, with solutions and hidden tests;
* ``exercises/<assignment>/`` — the released student version (``nbgrader generate_assignment``);
* ``gradebook/`` — everything produced while grading, git-ignored: ``submitted/``,
  ``autograded/``, ``feedback/`` and the sqlite gradebook ``gradebook.db``.

Autograding recomputes every chipsim score outside the learner's kernel: the preprocessor
``chipsim.grading.nbgrader_rescore.RescoreAnswers`` runs after ``Execute`` and before
``SaveAutoGrades``.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    Execute,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from chipsim.grading.nbgrader_rescore import RescoreAnswers

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

ROOT = os.path.dirname(os.path.abspath(__file__))
GRADEBOOK = os.path.join(ROOT, "gradebook")
os.makedirs(GRADEBOOK, exist_ok=True)  # nbgrader needs the database's folder to exist

c.CourseDirectory.course_id = "chipsim-ch4"
c.CourseDirectory.root = ROOT
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.submitted_directory = "gradebook/submitted"
c.CourseDirectory.autograded_directory = "gradebook/autograded"
c.CourseDirectory.feedback_directory = "gradebook/feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(GRADEBOOK, "gradebook.db")

# Released stubs: the line after each solution region raises NotImplementedError("<task>").
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE"}
# Cells that compile and simulate several programs need more than nbgrader's default 30 s.
c.Execute.timeout = 180

c.Autograde.autograde_preprocessors = [
    Execute,
    RescoreAnswers,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
