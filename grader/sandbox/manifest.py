"""A sha256 manifest of chipsim's own source files, to notice (and undo) tampering.

The grader takes a :class:`Snapshot` when its process starts, before any learner code runs.
After each notebook it compares the files on disk with the snapshot: a notebook that changed
chipsim scores 0, and the snapshot writes the original files back so that the next students
are graded by the pristine package.

Example:
    >>> snap = Snapshot.take()
    >>> snap.changed()
    []
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import chipsim

PACKAGE_DIR = Path(chipsim.__file__).resolve().parent
#: The grader's own package, watched the same way (a kernel must not rewrite the grader).
GRADER_DIR = Path(__file__).resolve().parents[1]


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


@dataclass(frozen=True)
class Snapshot:
    """The bytes and hashes of every ``chipsim/**/*.py`` file at one moment."""

    root: Path
    contents: dict[str, bytes]

    @staticmethod
    def take(root: Path = PACKAGE_DIR) -> Snapshot:
        return Snapshot(root, {str(p.relative_to(root)): p.read_bytes() for p in _files(root)})

    def manifest(self) -> dict[str, str]:
        """Relative path -> sha256 hex digest."""
        return {k: hashlib.sha256(v).hexdigest() for k, v in self.contents.items()}

    def changed(self) -> list[str]:
        """Files that differ from the snapshot: changed, removed or added (sorted)."""
        now = {str(p.relative_to(self.root)): p for p in _files(self.root)}
        out = [k for k in self.contents if k not in now or now[k].read_bytes() != self.contents[k]]
        out += [k for k in now if k not in self.contents]
        return sorted(out)

    @staticmethod
    def both() -> tuple[Snapshot, Snapshot]:
        """Snapshots of chipsim and of the grader itself."""
        return Snapshot.take(PACKAGE_DIR), Snapshot.take(GRADER_DIR)

    def restore(self) -> list[str]:
        """Write the snapshot's files back (and remove added ones); returns what changed."""
        changed = self.changed()
        for rel in changed:
            path = self.root / rel
            if rel in self.contents:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(self.contents[rel])
            else:
                path.unlink(missing_ok=True)
        return changed
