"""A project-local nbgrader exchange for ``make lab``: the Assignments tab works out of the box.

nbgrader's default exchange, ``/usr/local/share/nbgrader/exchange``, is meant for a shared
hub and is not writable on a learner's own machine ("The exchange directory does not exist and
could not be created"). ``make lab`` sets :data:`ENV` to a folder inside the course
(``gradebook/exchange``); ``nbgrader_config.py`` then calls :func:`ensure` which creates it
and releases the course's assignments into it (a copy of ``exercises/<assignment>``, as
``nbgrader release_assignment`` would), so *Fetch → Validate → Submit* work at once. Without
the variable nothing changes: a hub keeps the exchange its system config names.

Example:
    >>> import tempfile, pathlib
    >>> course = pathlib.Path(tempfile.mkdtemp())
    >>> (course / "exercises" / "demo").mkdir(parents=True)
    >>> _ = (course / "exercises" / "demo" / "demo.ipynb").write_text("{}")
    >>> root = ensure(course / "exchange", course / "exercises", "c1")
    >>> sorted(p.name for p in (root / "c1" / "outbound").iterdir())
    ['demo']
"""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from pathlib import Path

#: The environment variable ``make lab`` sets to the course's own exchange folder.
ENV = "CHIPSIM_LOCAL_EXCHANGE"


def ensure(root: Path, release: Path, course_id: str) -> Path:
    """Create the exchange ``root`` and release every assignment of ``release`` into it.

    An assignment already released is refreshed when ``exercises/`` changed (a learner's
    fetched copy is never touched: it lives in the course folder, not in the exchange). A
    notebook a learner edited in ``exercises/`` is released as committed, never with their
    edits (:func:`grader.course.release.changed_by_learner`).
    """
    from grader.course.release import changed_by_learner, committed

    root = Path(root)
    course = Path(release).parent
    outbound = root / course_id / "outbound"
    (root / course_id / "inbound").mkdir(parents=True, exist_ok=True)
    outbound.mkdir(parents=True, exist_ok=True)
    for folder in sorted(Path(release).iterdir()):
        notebooks = [p for p in folder.glob("*.ipynb") if p.is_file()] if folder.is_dir() else []
        if not notebooks:
            continue
        pristine = {
            p.name: committed(course, p) for p in notebooks if changed_by_learner(course, p)
        }
        # (None: nothing to tell edits by; the file is released as it is)
        if any(data is None for data in pristine.values()):
            continue  # edited, and no committed copy to release instead
        target = outbound / folder.name
        fresh = Path(tempfile.mkdtemp(dir=outbound, prefix=".new-"))
        shutil.copytree(folder, fresh / "a", ignore=shutil.ignore_patterns(".*", "__pycache__"))
        for name, data in pristine.items():
            (fresh / "a" / name).write_bytes(data)
        if target.is_dir() and not _differs(fresh / "a", target):
            shutil.rmtree(fresh)
            continue
        shutil.rmtree(target, ignore_errors=True)
        os.replace(fresh / "a", target)
        shutil.rmtree(fresh)
    return root


def _differs(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b, ignore=[".ipynb_checkpoints", "__pycache__"])
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return True
    return any(_differs(a / d, b / d) for d in cmp.common_dirs)


def work_folder(work: Path, root: Path, course_id: str) -> Path:
    """Create ``work``, where fetched assignments go, with an ``nbgrader_config.py`` naming
    the exchange: nbgrader's lab extension reloads its config there (and only there) before
    it fetches, validates or submits."""
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    config = work / "nbgrader_config.py"
    text = (
        "# Written by `make lab` (grader.course.local_exchange): the course's own exchange.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.Exchange.root = {str(root)!r}\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
    )
    if not config.is_file() or config.read_text(encoding="utf-8") != text:
        config.write_text(text, encoding="utf-8")
    return work


def from_environment(release: Path, work: Path, course_id: str) -> Path | None:
    """The local exchange named by :data:`ENV`, made ready (with the ``work`` folder for
    fetched assignments); ``None`` when the variable is not set."""
    value = os.environ.get(ENV)
    if not value:
        return None
    root = ensure(Path(value), release, course_id)
    work_folder(work, root, course_id)
    return root
