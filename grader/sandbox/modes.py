"""The grader's side of the sandbox: which isolation this machine allows, and each kernel's setup.

A learner's kernel runs under :mod:`~grader.sandbox.launch` (namespaces, an identity of its own,
limits; see that module for the mechanism). This module decides and prepares:

* :func:`sandbox_mode` — ``"root"`` (the grader is root: each kernel gets a uid of its own),
  ``"userns"`` (not root, but unprivileged user namespaces work: the same namespaces, every
  kernel mapped to the grader's uid) or ``None`` (neither: no isolation is possible, and
  :class:`~grader.sandbox.execute.GuardedExecute` refuses to grade unless the instructor
  says ``allow_unsandboxed``); :func:`why_no_sandbox` says what to do about it;
* :class:`Limits` — one kernel's resource limits;
* :class:`KernelRun` — one kernel's private run folder (its sockets, its status), the
  kernelspec that starts it through the launcher, and :meth:`KernelRun.status`: how the
  kernel ended, as the supervisor saw it;
* :func:`lock_down` — the course's private folders made 0700 (defence in depth; the kernel
  does not even see the course folder).

Guarantees, each with its test in ``tests/grading/test_grading_sandbox.py``: the kernel sees
no file of the course but the package view; it cannot write the package; it cannot see or
signal any process outside its namespace (the grader, other kernels); every process it
started ends with it; it has no network; its scratch is its own. As root, in addition, every
concurrently running kernel has its own uid (separate process limits).

Example:
    >>> Limits(memory_bytes=2 << 30, cpu_seconds=600).argv()[:4]
    ['--as-bytes', '2147483648', '--cpu', '600']
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The kernelspec's name (one private kernelspec folder per grading process).
KERNEL_NAME = "chipsim-sandbox"
#: The kernel's home and working folder inside the sandbox (its private scratch).
HOME = "/tmp"
LAUNCHER = Path(__file__).with_name("launch.py")
#: Variables of the grader's environment a kernel may see (BLAS threads, nbgrader's flag).
PASSED_ENV = (
    "NBGRADER_EXECUTION", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one learner kernel.

    Attributes:
        memory_bytes: address space per process: a bigger allocation raises ``MemoryError``.
        cpu_seconds: CPU time of the kernel process: past it the kernel is stopped.
        nproc: processes and threads (as root: of the kernel's own uid, so per kernel).
        file_bytes: the largest file the kernel may write (or grow).
        scratch_bytes: the size of the kernel's private ``/tmp`` (also its home).
    """

    memory_bytes: int = 4 << 30
    cpu_seconds: int = 900
    nproc: int = 256
    file_bytes: int = 256 << 20
    scratch_bytes: int = 512 << 20

    def argv(self) -> list[str]:
        return [
            "--as-bytes", str(self.memory_bytes), "--cpu", str(self.cpu_seconds),
            "--nproc", str(self.nproc), "--fsize", str(self.file_bytes),
            "--scratch-bytes", str(self.scratch_bytes),
        ]  # fmt: skip


#: The namespaces every kernel gets: mount, PID, network, IPC, UTS (linux/sched.h).
NAMESPACES = 0x00020000 | 0x20000000 | 0x40000000 | 0x08000000 | 0x04000000
CLONE_NEWUSER = 0x10000000


@functools.cache
def sandbox_mode() -> str | None:
    """``"root"``, ``"userns"`` or ``None``: the isolation this process can give kernels.

    Tried, not assumed: a container may run us as root without the right to make namespaces.
    """
    if not sys.platform.startswith("linux"):
        return None
    if os.geteuid() == 0 and _can_unshare(NAMESPACES):
        return "root"
    return "userns" if _can_unshare(CLONE_NEWUSER | NAMESPACES) else None


def _can_unshare(flags: int) -> bool:
    """Can a child of this process create these namespaces (as the launcher will)?"""
    import subprocess

    probe = (
        "import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
        f"sys.exit(0 if libc.unshare({flags}) == 0 else 1)"
    )
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def why_no_sandbox() -> str:
    """What to tell an instructor whose machine cannot sandbox kernels."""
    return (
        "chipsim cannot isolate learners' kernels here: it needs to run as root, or a Linux "
        "kernel that lets this user create user namespaces (e.g. `sysctl "
        "kernel.unprivileged_userns_clone=1`, or on Ubuntu an AppArmor profile allowing it). "
        "Without isolation a submitted notebook can read the solutions and the hidden-instance "
        "secret, rewrite the gradebook and stop the grader. Grade as root, or, only for "
        "notebooks you trust, run `make grade GRADE_FLAGS=--unsafe-no-sandbox`."
    )


def package_dir() -> Path:
    """Where the kernel imports chipsim from (the view is shown there)."""
    import chipsim

    return Path(chipsim.__file__).resolve().parent


def site_dirs() -> list[str]:
    """The grader's ``site-packages`` folders: the kernel sees (and imports from) the same."""
    names = ("site-packages", "dist-packages")
    return [p for p in dict.fromkeys(sys.path) if os.path.basename(p) in names and os.path.isdir(p)]


def run_base() -> Path:
    """The folder of the grader's per-kernel run folders (short paths: sockets live there)."""
    return Path(tempfile.gettempdir())


class KernelRun:
    """One kernel's private run folder, made by the grader (0700) and kept from the kernel.

    It holds ``ipc/`` (the kernel's sockets: the only folder the kernel shares with the
    grader, read-only once the sockets exist), ``kernels/chipsim-sandbox/kernel.json`` (how
    to start the launcher) and, written by the launcher, ``ready`` and ``status.json``.
    """

    def __init__(
        self,
        mode: str,
        limits: Limits,
        view: tuple[tuple[Path, Path], ...] | None,
        env: dict[str, str],
        files: Path | None = None,
    ):
        """``files``: a folder of the grader's whose files the kernel finds in its working
        folder (:data:`HOME`), as its own, when it starts."""
        self.mode, self.limits, self.view, self.env = mode, limits, view, dict(env)
        self.files = files
        self.limits_applied = ""
        sweep_run_dirs()
        self.path = Path(tempfile.mkdtemp(prefix=f"chipsim-k-{os.getpid()}-", dir=run_base()))
        (self.path / "ipc").mkdir(mode=0o700)
        self.kernels = self.path / "kernels"
        self._write_kernelspec()

    @property
    def ip(self) -> str:
        """The ``ip`` of the ipc transport: the sockets are ``ipc/k-<port>``."""
        return str(self.path / "ipc" / "k")

    def _write_kernelspec(self) -> None:
        pkg = package_dir()
        sites = site_dirs()
        binds = sorted({sys.prefix, sys.base_prefix, *sites})
        argv = [sys.executable, "-I", "-S", str(LAUNCHER), "--run-dir", str(self.path),
                "--mode", self.mode, "--python", sys.executable,
                "--pythonpath", os.pathsep.join(dict.fromkeys(
                    [str(pkg.parent), *(str(p.parent) for _, p in self.view or ()), *sites])),
                *self.limits.argv()]  # fmt: skip
        for path in binds:
            argv += ["--bind-ro", path]
        for shown, package in self.view or ():  # each package's grading view, where it was
            argv += ["--view", f"{shown}:{package}"]
        if self.files is not None:
            argv += ["--files", str(self.files)]
        for name in (*PASSED_ENV, *self.env):
            argv += ["--env", name]
        spec = {
            "argv": [*argv, "{connection_file}"],
            "display_name": "Python 3 (chipsim sandbox)",
            "language": "python",
            "interrupt_mode": "signal",
            "env": self.env,
            "metadata": {"debugger": False},
        }
        folder = self.kernels / KERNEL_NAME
        folder.mkdir(parents=True)
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")

    def clear(self) -> None:
        """Forget the last kernel's status (before a start or a restart)."""
        for name in ("ready", "status.json"):
            (self.path / name).unlink(missing_ok=True)

    def wait_ready(self, timeout: float, alive: Callable[[], bool] = lambda: True) -> dict | None:
        """Wait until the kernel's sockets are locked; None when ready, else its status.
        Once ready, :attr:`limits_applied` says what bounds the kernel's memory and processes.

        ``alive``: is the launcher still running (a launcher that died says nothing more)?"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (self.path / "ready").exists():
                self.limits_applied = (self.path / "ready").read_text(errors="replace")
                return None
            status = self.status()
            if status is not None:
                return status
            if not alive():
                return self.status(wait=1.0) or {"setup_error": "the launcher failed (see log)"}
            time.sleep(0.02)
        return {"setup_error": f"the kernel did not start within {timeout:.0f} s"}

    def status(self, wait: float = 0.0) -> dict | None:
        """How the last kernel ended (``status.json``), waiting up to ``wait`` seconds."""
        deadline = time.monotonic() + wait
        while True:
            try:
                return json.loads((self.path / "status.json").read_text())
            except (FileNotFoundError, ValueError):
                if time.monotonic() >= deadline:
                    return None
                time.sleep(0.05)

    def remove(self) -> None:
        """Delete the run folder (after the kernel ended: nothing in it can change any more;
        ``shutil.rmtree`` works by file descriptor and never follows a link)."""
        shutil.rmtree(self.path, ignore_errors=True)


def sweep_run_dirs() -> list[Path]:
    """Remove run folders left by grading processes that were killed (their pid is in the
    name); only this user's own real folders, never through a link."""
    gone = []
    for path in run_base().glob("chipsim-k-*-*"):
        try:
            pid = int(path.name.split("-")[2])
            st = path.lstat()
        except (ValueError, OSError):
            continue
        if st.st_uid != os.geteuid() or not path.is_dir() or path.is_symlink():
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
        except PermissionError:
            pass
    return gone


def lock_down(course: Path, private: tuple[str, ...] = ("solutions", "gradebook")) -> list[Path]:
    """Make the course's private folders 0700 (the kernel does not see the course at all;
    this also keeps other users of the machine out). Returns the folders changed."""
    done = []
    for name in private:
        path = Path(course) / name
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o700)
            done.append(path)
    return done
