"""Start sandboxed kernels the way the grader does, and attack from inside them.

``SandboxedKernel`` is one kernel in the chipsim sandbox (:class:`KernelRun` + a Jupyter
kernel manager on the ipc transport), with ``run(code)`` returning what the code printed.
``battery()`` runs the red-team probes of ``test_grading_sandbox.py`` — two kernels at once,
attacks from one on the other, on the grader and on the machine — and returns the facts as a
dict. Run as a script it prints that dict as JSON: the non-root tests run it as another user.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from grader.sandbox.modes import KERNEL_NAME, KernelRun, Limits, sandbox_mode
from grader.sandbox.view import grading_view


class SandboxedKernel:
    """One kernel in the sandbox, with the fusion notebook's view of the package."""

    def __init__(
        self, limits: Limits | None = None, assignment: str = "fusion", files: Path | None = None
    ) -> None:
        mode = sandbox_mode()
        assert mode is not None, "this machine cannot sandbox kernels"
        self.run_dir = KernelRun(mode, limits or Limits(), grading_view(assignment), {}, files)
        self.km = KernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(self.run_dir.kernels)]),
            transport="ipc",
            ip=self.run_dir.ip,
        )
        self.km.start_kernel()
        ready = self.run_dir.wait_ready(120)
        assert ready is None, ready
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    @property
    def supervisor_pid(self) -> int:
        return self.km.provisioner.process.pid

    def run(self, code: str, timeout: float = 120) -> str:
        """Run ``code``; what it printed (and the error, if it raised)."""
        out: list[str] = []

        def hook(msg: dict) -> None:
            content = msg["content"]
            if msg["msg_type"] == "stream":
                out.append(content["text"])
            elif msg["msg_type"] == "error":
                out.append(f"{content['ename']}: {content['evalue']}")

        self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        return "".join(out).strip()

    def facts(self, code: str) -> dict:
        """Run ``code``, which prints one JSON object last."""
        text = self.run(code)
        return json.loads(text.splitlines()[-1])

    def stop(self) -> dict | None:
        """Shut the kernel down; the supervisor's status."""
        if self.km.is_alive():
            self.km.shutdown_kernel(now=False)
        self.kc.stop_channels()
        status = self.run_dir.status(wait=10)
        self.km.cleanup_resources()
        self.run_dir.remove()
        return status


#: Run in a kernel: who it is and what it can see, reach and change.
LOOK_AROUND = """
import json, os, socket, subprocess
import chipsim
def attempt(fn):
    try:
        return str(fn())[:200]
    except Exception as e:
        return type(e).__name__
out = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "pid": os.getpid(),
       "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
       "root": sorted(os.listdir("/")), "tmp": sorted(os.listdir("/tmp"))}
for key, path in PATHS.items():
    out[key] = attempt(lambda: os.listdir(path) if os.path.isdir(path) else open(path).read())
out["write_package"] = attempt(lambda: open(chipsim.__file__, "a").write("# x"))
out["package_file"] = chipsim.__file__
out["git_show"] = attempt(lambda: subprocess.run(
    ["git", "-c", "safe.directory=*", "-C", COURSE, "show", "HEAD:nbgrader_config.py"],
    capture_output=True, text=True).returncode)
out["signal_grader"] = attempt(lambda: os.kill(GRADER_PID, 0))
out["tcp_to_grader"] = attempt(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2))
out["lock_sockets"] = attempt(lambda: os.rename("/run/kernel/k-1", "/run/kernel/k-9"))
out["plant_link"] = attempt(lambda: os.symlink("/etc/passwd", "/run/kernel/k-9"))
out["own_scratch"] = attempt(lambda: oct(os.stat(os.environ["HOME"]).st_mode & 0o777))
print(json.dumps(out))
"""

#: Run in a kernel: leave a daemon behind (its own session), and a crowd of sleepers.
LEAVE_DAEMONS = """
import os, subprocess
for _ in range(20):  # a crowd of processes that outlive the cell (and try to outlive the kernel)
    subprocess.Popen(["sleep", "987654"], start_new_session=True)
print(os.getuid())
"""


def battery(course: str) -> dict:
    """Two kernels at once; every probe of the red-team tests. Returns the observed facts."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    a, b = SandboxedKernel(), SandboxedKernel()
    try:
        paths = {
            "course": course,
            "solutions": f"{course}/solutions",
            "gradebook": f"{course}/gradebook",
            "git": f"{course}/.git",
            "other_run_dir": str(b.run_dir.path),
            "other_connection": b.km.connection_file,
            "jupyter_runtime": str(Path(b.km.connection_file).parent),
        }
        header = (
            f"PATHS = {paths!r}\nCOURSE = {course!r}\nGRADER_PID = {os.getpid()}\nPORT = {port}\n"
        )
        facts = {"a": a.facts(header + LOOK_AROUND), "b": b.facts(header + LOOK_AROUND)}
        facts["grader_pid"] = os.getpid()
        facts["connection_name"] = os.path.basename(b.km.connection_file)
        facts["supervisor_b"] = b.supervisor_pid
        # a kills every process it can see, then tries b's supervisor by its host pid
        facts["a_kills_b"] = a.run(
            "import os, signal\n"
            f"for pid in ({b.supervisor_pid}, {os.getpid()}):\n"
            "    try:\n        os.kill(pid, signal.SIGKILL); print('killed', pid)\n"
            "    except OSError as e:\n        print(type(e).__name__)\n"
        )
        facts["b_alive_after"] = b.run("print(6 * 7)")
        # daemons in a: they must not survive a's kernel
        facts["a_daemon_uid"] = int(a.run(LEAVE_DAEMONS))
        facts["a_status"] = a.stop()
        time.sleep(1)
        facts["sleepers_left"] = _sleepers()
        facts["b_forks_after"] = b.run(
            "import subprocess\nprint(subprocess.run(['true']).returncode)"
        )
    finally:
        for k in (a, b):
            try:
                k.stop()
            except Exception:
                pass
        listener.close()
    facts["run_dirs_left"] = [str(p) for p in (a.run_dir.path, b.run_dir.path) if p.exists()]
    return facts


def _sleepers() -> list[int]:
    """Host pids of the daemons ``LEAVE_DAEMONS`` starts (``sleep 987654``)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and b"987654" in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            pass
    return found


def ended(code: str, limits: Limits | None = None) -> dict | None:
    """Run ``code`` (which ends the kernel) in a fresh kernel; the supervisor's status."""
    k = SandboxedKernel(limits)
    try:
        k.kc.execute(code)
        deadline = time.monotonic() + 60
        while k.km.is_alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        return k.run_dir.status(wait=10)
    finally:
        k.stop()


def kill_from_outside() -> dict | None:
    """A kernel killed by someone else (SIGKILL from the host): the status says so."""
    k = SandboxedKernel()
    try:
        pid = int(k.run("import os; print(os.getpid())"))  # 2: in its own PID namespace
        assert pid < 10, pid
        host = [p for p in _children(k.supervisor_pid)]
        for p in host:
            for q in _children(p):
                os.kill(q, signal.SIGKILL)  # the kernel itself, by its host pid
        time.sleep(2)
        return k.run_dir.status(wait=10)
    finally:
        k.stop()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if entry.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry))
    return found


if __name__ == "__main__":
    print(json.dumps(battery(sys.argv[1])))
