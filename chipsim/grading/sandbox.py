"""The ``chipsim-sandbox`` kernel: learners' code runs unprivileged, with resource limits.

:func:`install_kernelspec` writes a kernelspec whose launcher (:mod:`.sandbox_launch`, run
as the grading user) starts ``python -m ipykernel_launcher`` under ``setpriv`` (as
``nobody:nogroup`` when the grader is root) and ``prlimit`` (address space, CPU seconds,
processes). :func:`lock_down` makes a course's private folders (``solutions/``,
``gradebook/``: sources, hidden tests, submissions and the sqlite gradebook) readable by
their owner only. Autograding selects the kernel through
:class:`~chipsim.grading.execute.GuardedExecute` (``kernel_name``).

What holds where:

* **root**: the kernel runs as ``nobody`` — it cannot read ``solutions/`` or the gradebook,
  cannot write chipsim's files, cannot signal the grader — and under the limits.
* **not root**: the kernel runs as the grader under the limits only; the protection is the
  grader's: rescoring outside the kernel, the manifest check of chipsim's files, and the
  static checks of the learner's cells.

Example:
    >>> limits = Limits(memory_bytes=2 << 30, cpu_seconds=600)
    >>> limits.argv()[4:6]
    ['--as-bytes', '2147483648']
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

#: The kernelspec's name (``c.GuardedExecute.kernel_name``).
KERNEL_NAME = "chipsim-sandbox"
LAUNCHER = Path(__file__).with_name("sandbox_launch.py")


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of one learner kernel (``prlimit``) and the user it runs as.

    Attributes:
        memory_bytes: address-space limit: a bigger allocation raises ``MemoryError``.
        cpu_seconds: CPU time of the whole kernel: past it the kernel is killed (and the
            grader restarts it; see :class:`~chipsim.grading.execute.GuardedExecute`).
        nproc: processes and threads of the unprivileged user, all kernels together.
        user, group: who the kernel runs as when the grader is root.
        file_bytes: the largest file the kernel may write (or grow), stderr included: past
            it a write fails with ``OSError: File too large``, so a learner cannot fill the
            grader's disk.
    """

    memory_bytes: int = 4 << 30
    cpu_seconds: int = 900
    nproc: int = 1024
    user: str = "nobody"
    group: str = "nogroup"
    file_bytes: int = 1 << 30

    def argv(self) -> list[str]:
        python, site = kernel_python()
        return [
            "--python", python, "--site", site,
            "--as-bytes", str(self.memory_bytes), "--cpu", str(self.cpu_seconds),
            "--nproc", str(self.nproc), "--user", self.user, "--group", self.group,
            "--fsize", str(self.file_bytes),
        ]  # fmt: skip


def world_reachable(path: str | Path) -> bool:
    """Can any user reach ``path`` (every folder above it searchable, the file readable)?"""
    path = Path(os.path.realpath(path))
    if not path.exists() or not path.stat().st_mode & 0o004:
        return False
    return all(p.stat().st_mode & 0o001 for p in path.parents)


def kernel_python() -> tuple[str, str]:
    """The interpreter the sandboxed kernel runs, and a site folder to add (or ``""``).

    Normally this venv's own ``python``. When its base installation is private (a Python
    built under ``/root``, say), an unprivileged user cannot start it: then a system Python
    of the same version runs the kernel with this venv's ``site-packages`` added (the
    extension modules share the ABI of one minor version).
    """
    base = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if not can_drop_privileges() or (world_reachable(sys.executable) and world_reachable(base)):
        return sys.executable, ""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for folder in ("/usr/bin", "/usr/local/bin"):
        candidate = Path(folder) / version
        if world_reachable(candidate):
            import sysconfig

            return str(candidate), sysconfig.get_paths()["purelib"]
    return sys.executable, ""  # the launcher will say the kernel cannot drop privileges


def can_drop_privileges() -> bool:
    """True when kernels can run as another user (root, with ``setpriv`` installed)."""
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def default_kernel_dir() -> Path:
    """``<sys.prefix>/share/jupyter/kernels``: the venv's own kernels, found by Jupyter."""
    return Path(sys.prefix) / "share" / "jupyter" / "kernels"


def install_kernelspec(limits: Limits = Limits(), prefix: Path | None = None) -> Path:
    """Write the ``chipsim-sandbox`` kernelspec (kernel.json + a copy of the launcher).

    Args:
        limits: the limits baked into the kernel's command line.
        prefix: the ``kernels`` folder to install into (default: the venv's).

    Returns:
        The kernelspec's folder.
    """
    folder = (prefix or default_kernel_dir()) / KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(LAUNCHER, folder / "launch.py")
    spec = {
        "argv": [sys.executable, "{resource_dir}/launch.py", *limits.argv(), "{connection_file}"],
        "display_name": "Python 3 (chipsim sandbox)",
        "language": "python",
        "interrupt_mode": "signal",
        "env": {"PYTHONDONTWRITEBYTECODE": "1"},
        "metadata": {"debugger": False},
    }
    (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    return folder


def lock_down(course: Path, private: tuple[str, ...] = ("solutions", "gradebook")) -> list[Path]:
    """Make the course's private folders 0700, so a sandboxed kernel cannot enter them; the
    course folder itself stays traversable (the kernel may import chipsim from it).

    Returns the folders changed. Does nothing for folders that do not exist.
    """
    done = []
    for name in private:
        path = Path(course) / name
        if path.is_dir():
            path.chmod(0o700)  # the folder's mode is enough: nothing inside can be reached
            done.append(path)
    return done
