"""A control group for one sandboxed kernel: memory and processes limited for its whole tree.

Used by :mod:`~grader.sandbox.launch` (the supervisor, standard library only, loaded by path). The
per-process limits of :mod:`~grader.sandbox.ns` (``RLIMIT_AS``, ``RLIMIT_NPROC``) bound each process
alone: a kernel that starts ten processes of 4 GiB each holds 40 GiB. A control group bounds
them together: ``memory.max`` and ``pids.max`` (cgroup v2), or ``memory.limit_in_bytes`` and
``pids.max`` (the v1 hierarchies a container may have instead). :func:`create` tries v2, then
v1, and says which limits hold; where neither can be made (not root, no delegation) the
per-process limits stay the only ones, and the grading log says so.

Example:
    >>> group = create("probe", memory_bytes=1 << 30, pids=64, root="/nonexistent")
    >>> group.kind, group.describe()
    ('none', 'per-process limits only (no control group could be made here)')
"""

from __future__ import annotations

import os
import time


class Group:
    """One kernel's control group(s): where, which kind, and how to end them."""

    def __init__(self, kind: str, paths: list[str], memory_bytes: int, pids: int) -> None:
        self.kind, self.paths = kind, paths
        self.memory_bytes, self.pids = memory_bytes, pids

    def describe(self) -> str:
        if self.kind == "none":
            return "per-process limits only (no control group could be made here)"
        return (f"memory {self.memory_bytes / 2**30:g} GiB and {self.pids} processes for the "
                f"kernel and everything it starts (cgroup {self.kind})")  # fmt: skip

    def add(self, pid: int) -> None:
        """Put process ``pid`` (and so everything it will start) into the group."""
        for path in self.paths:
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write(str(pid))

    def out_of_memory(self) -> bool:
        """Did the group's memory limit kill a process?"""
        for path in self.paths:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    with open(os.path.join(path, name)) as f:
                        for line in f:
                            key, _, value = line.partition(" ")
                            if key == "oom_kill" and int(value or 0) > 0:
                                return True
                except (OSError, ValueError):
                    continue
        return False

    def remove(self, wait: float = 5.0) -> None:
        """Remove the group once its processes are gone (a group with processes cannot be)."""
        deadline = time.monotonic() + wait
        for path in self.paths:
            while True:
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)


def _mounts() -> list[tuple[str, str, str, str]]:
    """``(mount point, root within its hierarchy, file system type, options)`` of every
    cgroup mount."""
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.rstrip("\n").partition(" - ")
                fstype, _, rest = right.partition(" ")
                if fstype in ("cgroup", "cgroup2"):
                    options = rest.split(" ")[1] if " " in rest else ""
                    fields = left.split(" ")
                    out.append((fields[4], fields[3], fstype, options))
    except OSError:
        pass
    return out


def _inside(mount: str, mount_root: str, path: str) -> str:
    """Where the hierarchy's ``path`` is under a mount of its ``mount_root``."""
    rel = path[len(mount_root) :] if path.startswith(mount_root) else ""
    return mount.rstrip("/") + "/" + rel.strip("/") if rel.strip("/") else mount


def _own(controller: str) -> str:
    """This process's cgroup path in the hierarchy of ``controller`` (``""``: the v2 one)."""
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(",") or (not controller and names == ""):
                    return path
    except OSError:
        pass
    return "/"


def _write(path: str, name: str, value: str) -> None:
    with open(os.path.join(path, name), "w") as f:
        f.write(value)


def _v2(name: str, memory_bytes: int, pids: int, parent: str) -> Group | None:
    try:
        with open(os.path.join(parent, "cgroup.controllers")) as f:
            available = f.read().split()
        if not {"memory", "pids"} <= set(available):
            return None
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            enabled = f.read().split()
        if not {"memory", "pids"} <= set(enabled):
            _write(parent, "cgroup.subtree_control", "+memory +pids")
        path = os.path.join(parent, name)
        os.mkdir(path, 0o755)
    except OSError:
        return None
    try:
        _write(path, "memory.max", str(memory_bytes))
        _write(path, "memory.swap.max", "0") if os.path.exists(f"{path}/memory.swap.max") else None
        _write(path, "pids.max", str(pids))
    except OSError:
        Group("v2", [path], memory_bytes, pids).remove(0)
        return None
    return Group("v2", [path], memory_bytes, pids)


def _v1(
    name: str, memory_bytes: int, pids: int, mounts: dict[str, tuple[str, str]]
) -> Group | None:
    made: list[str] = []
    try:
        for controller, limits in (
            ("memory", {"memory.limit_in_bytes": str(memory_bytes)}),
            ("pids", {"pids.max": str(pids)}),
        ):
            mount, mount_root = mounts[controller]
            path = _inside(mount, mount_root, _own(controller)) + "/" + name
            os.mkdir(path, 0o755)
            made.append(path)
            for key, value in limits.items():
                _write(path, key, value)
    except (KeyError, OSError):
        Group("v1", made, memory_bytes, pids).remove(0)
        return None
    return Group("v1", made, memory_bytes, pids)


def create(name: str, *, memory_bytes: int, pids: int, root: str = "") -> Group:
    """A control group ``name`` limiting memory and processes (v2, else v1, else none).

    ``root``: look for cgroup mounts only under this folder (tests)."""
    mounts = [m for m in _mounts() if not root or m[0].startswith(root)]
    for mount, mount_root, fstype, _ in mounts:
        if fstype == "cgroup2":  # the hierarchy's top (it may hold processes), then our own
            for parent in dict.fromkeys((mount, _inside(mount, mount_root, _own("")))):
                group = _v2(name, memory_bytes, pids, parent)
                if group is not None:
                    return group
    v1: dict[str, tuple[str, str]] = {}
    for mount, mount_root, fstype, options in mounts:
        if fstype == "cgroup":
            for controller in ("memory", "pids"):
                if controller in options.split(","):
                    v1[controller] = (mount, mount_root)
    if {"memory", "pids"} <= set(v1):
        group = _v1(name, memory_bytes, pids, v1)
        if group is not None:
            return group
    return Group("none", [], memory_bytes, pids)
