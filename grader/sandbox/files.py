"""A learner's files, read by a process with more rights than the learner: never through a link.

A learner can put anything in a folder they hand in: a link to the instructor's solution or to
the course secret, a FIFO that blocks whoever reads it, a device, a folder named like a
notebook. Whoever copies or reads that folder with more rights than the learner (the grader,
root on a hub) must follow no link and open nothing but regular files. This module is the one
place that walks and copies such a tree:

* :func:`walk` lists a tree without following links and says what in it is not a plain file
  or folder (:func:`problems`);
* :func:`copy_tree` copies the plain files of a tree, opening every file and folder with
  ``O_NOFOLLOW`` relative to its parent's descriptor (a link swapped in after the check is
  refused, not followed), within a size and count budget; what it leaves out it says why.

Example:
    >>> import tempfile, pathlib, os
    >>> src = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (src / "helpers.py").write_text("x = 1\\n")
    >>> os.symlink("/etc/passwd", src / "secret.txt")
    >>> problems(src)
    ['secret.txt is a link']
    >>> dst = pathlib.Path(tempfile.mkdtemp()) / "copy"
    >>> copy_tree(src, dst).copied, sorted(p.name for p in dst.iterdir())
    (['helpers.py'], ['helpers.py'])
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

#: The most a learner's extra files may hold, and how many there may be.
MAX_TREE_BYTES = 16 << 20
MAX_TREE_FILES = 200
MAX_DEPTH = 8

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)


def walk(root: Path) -> list[tuple[str, os.stat_result]]:
    """``(relative path, lstat)`` of every entry under ``root``, links not followed."""
    out: list[tuple[str, os.stat_result]] = []
    root = Path(root)
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            names = sorted(os.listdir(root / rel)) if rel or root.is_dir() else []
        except OSError:
            continue
        for name in names:
            path = f"{rel}/{name}" if rel else name
            try:
                st = os.lstat(root / path)
            except OSError:
                continue
            out.append((path, st))
            if stat.S_ISDIR(st.st_mode) and path.count("/") < MAX_DEPTH:
                stack.append(path)
    return sorted(out)


def problems(root: Path) -> list[str]:
    """What in the tree at ``root`` is not a plain file or folder (links, devices, FIFOs,
    sockets), or nests too deep; empty when the tree is safe to hand to other tools."""
    found = []
    for rel, st in walk(root):
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            found.append(f"{rel} is a link")
        elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            found.append(f"{rel} is a special file (device, FIFO or socket)")
        elif stat.S_ISDIR(mode) and rel.count("/") >= MAX_DEPTH:
            found.append(f"{rel} nests folders deeper than {MAX_DEPTH} levels")
    return found


@dataclass
class Copied:
    """What :func:`copy_tree` did: the files copied, and each left out with the reason."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    bytes: int = 0


def copy_tree(
    src: Path,
    dst: Path,
    *,
    skip: tuple[str, ...] = (),
    dotfiles: bool = True,
    max_bytes: int = MAX_TREE_BYTES,
    max_files: int = MAX_TREE_FILES,
    mode: int = 0o600,
) -> Copied:
    """Copy the plain files of ``src`` into a new folder ``dst``, following no link.

    Args:
        src: the learner's folder (it may itself not be a link).
        dst: where the copy goes (created, mode 0700; must not exist).
        skip: file-name suffixes to leave out (e.g. ``(".ipynb",)``).
        dotfiles: copy names that start with a dot (``.ipynb_checkpoints``, ...) too.
        max_bytes, max_files: the budget; files beyond it are left out and listed.
        mode: the copies' permission bits.
    """
    done = Copied()
    os.mkdir(dst, 0o700)
    top = os.open(src, _DIR_FLAGS)
    try:
        rules = (skip, dotfiles, max_bytes, max_files, mode)
        _copy_dir(top, Path(dst), "", 0, rules, done)
    finally:
        os.close(top)
    return done


def _copy_dir(fd: int, dst: Path, rel: str, depth: int, rules: tuple, done: Copied) -> None:
    skip, dotfiles, max_bytes, max_files, mode = rules
    for name in sorted(os.listdir(fd)):
        path = f"{rel}/{name}" if rel else name
        if name.startswith(".") and not dotfiles:
            continue
        try:
            st = os.lstat(name, dir_fd=fd)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if depth >= MAX_DEPTH:
                done.skipped.append(f"{path}: nested deeper than {MAX_DEPTH} folders")
                continue
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                done.skipped.append(f"{path}: {exc.strerror}")
                continue
            try:
                os.mkdir(dst / name, 0o700)
                _copy_dir(sub, dst / name, path, depth + 1, rules, done)
            finally:
                os.close(sub)
            continue
        if not stat.S_ISREG(st.st_mode):
            kind = "a link" if stat.S_ISLNK(st.st_mode) else "not a plain file"
            done.skipped.append(f"{path}: {kind}")
            continue
        if name.endswith(skip):
            continue
        if len(done.copied) >= max_files or done.bytes + st.st_size > max_bytes:
            done.skipped.append(f"{path}: beyond the {max_files} files / {max_bytes:,} B allowed")
            continue
        try:
            data = _read_plain(fd, name, max_bytes - done.bytes)
        except OSError as exc:
            done.skipped.append(f"{path}: {exc.strerror or exc}")
            continue
        if data is None:
            done.skipped.append(f"{path}: beyond the {max_files} files / {max_bytes:,} B allowed")
            continue
        out = os.open(dst / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with os.fdopen(out, "wb") as f:
            f.write(data)
        done.copied.append(path)
        done.bytes += len(data)


def _read_plain(dir_fd: int, name: str, limit: int) -> bytes | None:
    """The bytes of the regular file ``name``, or None when it holds more than ``limit``
    (opened without following a link; a file that is not regular once open — swapped
    meanwhile — is refused)."""
    fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a plain file")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if len(data) > limit else data
    finally:
        os.close(fd)
