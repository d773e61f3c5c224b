"""What was graded, from which bytes: regrade a submission exactly when it changed.

nbgrader skips a submission it has graded before (unless ``--force``), so a learner who
replaces their notebook keeps the old grade. The grading pool instead keeps a ledger,
``gradebook/graded.json``: for each job (learner, assignment) the sha256 of what was graded —
the submitted notebooks' bytes *and* the grader itself (the course's source notebooks, the
package's files, the hidden-instance secret's fingerprint, ``nbgrader_config.py``). A job is
graded again when that digest differs from the ledger's (or it was not graded last time), and
skipped, and reported as unchanged, when it is the same. The ledger is written by one
function, :meth:`Ledger.record`.

The ledger lives in the gradebook database (:mod:`.records`, table ``chipsim_ledger``), so
that grading processes on several machines (shards) share it safely; each outcome is written
as soon as the job is graded, so a run that is killed loses nothing it finished.
``gradebook/graded.json`` is a readable copy written at the end of each run (and read once,
when a course graded before the ledger moved into the database has no rows yet).

Before a submission is handed to nbgrader it is checked (:func:`check_submission`): a link or
a special file anywhere in the submission's folder (nbgrader, and root on a hub, would follow
or open it), a notebook that is not one, too large or nested too deep for the grader to
read, a folder too large: that submission is not graded, and is listed with the reason —
never a silent 0, and never a stop for the others. A folder that merely has a notebook's name
(``scratch.ipynb/``) is a folder, not a notebook.

Example:
    >>> ledger = Ledger({})
    >>> ledger.record("ada/fusion", "abc", "graded")
    >>> ledger.unchanged("ada/fusion", "abc"), ledger.unchanged("ada/fusion", "abd")
    (True, False)
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from grader.gradebook.records import Store
from grader.sandbox import files
from grader.sandbox.outputs import depth

#: The largest submitted notebook the grader reads, and the most a whole submission may hold.
MAX_NOTEBOOK_BYTES = 64 << 20
MAX_SUBMISSION_BYTES = 128 << 20
MAX_SUBMISSION_FILES = 1000
#: Deeper nesting than this in a submitted file is refused (the grader's parser recurses).
MAX_NOTEBOOK_DEPTH = 100
LEDGER = Path("gradebook") / "graded.json"


def notebooks_in(folder: Path) -> list[Path]:
    """The submitted notebooks: regular ``*.ipynb`` files at the top of ``folder``."""
    return sorted(p for p in folder.glob("*.ipynb") if p.is_file() and not p.is_symlink())


def check_submission(folder: Path) -> str:
    """Why the submission in ``folder`` cannot be graded, or ``""`` when it can."""
    if folder.is_symlink() or folder.parent.is_symlink() or not folder.is_dir():
        return "the submission folder (or the learner's) is a link or not a folder"
    found = files.problems(folder)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"{found[0]}{more}: a submission holds plain files and folders only"
    entries = files.walk(folder)
    total = sum(st.st_size for _, st in entries if stat.S_ISREG(st.st_mode))
    if total > MAX_SUBMISSION_BYTES or len(entries) > MAX_SUBMISSION_FILES:
        return (f"the submission holds {len(entries)} files and {total:,} bytes, more than "
                f"{MAX_SUBMISSION_FILES} files or {MAX_SUBMISSION_BYTES:,} bytes")  # fmt: skip
    notebooks = notebooks_in(folder)
    for path in notebooks:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            return f"{path.name} is {size:,} bytes, more than {MAX_NOTEBOOK_BYTES:,}"
        try:
            data = json.loads(path.read_bytes())
        except RecursionError:
            return f"{path.name} is nested too deeply to read"
        except ValueError as exc:
            return f"{path.name} is not a notebook (not JSON: {str(exc)[:80]})"
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            return f"{path.name} is not a notebook (no list of cells)"
        if depth(data, MAX_NOTEBOOK_DEPTH) > MAX_NOTEBOOK_DEPTH:
            return f"{path.name} is nested deeper than {MAX_NOTEBOOK_DEPTH} levels"
    return ""


def grader_digest(course: Path, assignment: str, package: Path, secret_id: str) -> str:
    """sha256 of everything of the grader's that decides a grade for ``assignment``."""
    h = hashlib.sha256(f"{assignment}\0{secret_id}\0".encode())
    files = [(course, p) for p in sorted((course / "solutions" / assignment).glob("*.ipynb"))]
    files += [(package, p) for p in sorted(package.rglob("*.py")) if "__pycache__" not in p.parts]
    files.append((course, course / "nbgrader_config.py"))
    for base, path in files:
        if path.is_file():
            h.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def submission_digest(folder: Path, grader: str) -> str:
    """sha256 of the submission's plain files (names and bytes: the notebooks and the files
    beside them, which the kernel gets too) under the grader's digest."""
    h = hashlib.sha256(grader.encode())
    for rel, st in files.walk(folder):
        if stat.S_ISREG(st.st_mode):
            h.update(rel.encode() + b"\0" + (folder / rel).read_bytes() + b"\0")
    return h.hexdigest()


@dataclass
class Ledger:
    """job key (``student/assignment``) -> ``{"digest", "status", "reason"}``, written through
    to ``store`` (the database) when there is one, as grading process ``owner``."""

    entries: dict
    store: Store | None = None
    owner: str = ""

    @staticmethod
    def load(course: Path) -> Ledger:
        """The readable copy ``gradebook/graded.json`` (empty when there is none)."""
        try:
            return Ledger(json.loads((Path(course) / LEDGER).read_text()))
        except (FileNotFoundError, ValueError):
            return Ledger({})

    @staticmethod
    def open(course: Path, store: Store, owner: str = "") -> Ledger:
        """The database's ledger (seeded once from an older course's ``graded.json``)."""
        entries = store.entries()
        if not entries:
            for key, entry in Ledger.load(course).entries.items():
                # "imported", not "graded": the audit log counts only gradings it saw
                status = "imported" if entry.get("status") == "graded" else "not graded"
                store.record(key, entry.get("digest", ""), status, entry.get("reason", ""))
                entries[key] = {**entry, "status": status}
        return Ledger(entries, store, owner)

    def unchanged(self, key: str, digest: str) -> bool:
        """Was ``key`` graded, successfully, from exactly these bytes?"""
        entry = self.entries.get(key, {})
        return entry.get("digest") == digest and entry.get("status") in ("graded", "imported")

    def record(self, key: str, digest: str, status: str, reason: str = "") -> None:
        """The one place a job's outcome is written (``status``: graded / not graded)."""
        self.entries[key] = {"digest": digest, "status": status, "reason": reason}
        if self.store is not None:
            self.store.record(key, digest, status, reason, self.owner)

    def save(self, course: Path) -> Path:
        """Write the readable copy ``gradebook/graded.json`` (from the database, when shared)."""
        if self.store is not None:
            self.entries = self.store.entries()
        path = Path(course) / LEDGER
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path
