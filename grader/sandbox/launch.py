"""The sandbox kernel's launcher: one learner kernel in its own namespaces, identity and limits.

Jupyter runs it, as whoever grades, from the kernelspec that
:class:`~grader.sandbox.execute.GuardedExecute` writes for each grading process::

    python -I -S launch.py --run-dir DIR --mode root --bind-ro /usr ... \\
        --view VIEW:PKGDIR --as-bytes N --cpu S --nproc N --fsize N {connection_file} [args]

It is a standalone script (standard library only, run with ``-I -S``): no learner-writable
path is on its ``sys.path``; its other half, :mod:`~grader.sandbox.ns` (the Linux calls, the
kernel's
file system, init), is loaded from beside it by path. Three processes make one kernel::

    supervisor (this script, on the host)
      └─ init: pid 1 of new PID, mount, network, IPC and UTS namespaces
           └─ the IPython kernel, in its own session (and everything it starts)

The **supervisor** allocates the kernel's identity (``--mode root``: a uid of its own from a
pool, held by a lock for the kernel's lifetime; ``--mode userns``: an unprivileged user
namespace mapping the grader's uid to uid 1000), forks init into the new namespaces, forwards
Jupyter's signals (interrupt) to it, and when it ends writes ``status.json`` (how the kernel
ended: exit code or signal, CPU seconds, peak memory) into ``--run-dir``, a folder of the
grader's that the kernel never sees.

**init** (:func:`~grader.sandbox.ns.sandbox_init`) builds the kernel's file system before anything
of
the learner runs: a fresh tmpfs root holding read-only binds of the system folders, the Python
installation, the venv and the package *view* (``--view``: the grading view of chipsim, bound
where chipsim is imported from), a private ``/tmp`` (tmpfs, size-limited, owned by the kernel's
uid, mode 0700) that is also ``$HOME``, ``/dev`` with a few device nodes, a fresh ``/proc``,
and ``/run/kernel``: the one folder shared with the grader, where the kernel creates its ZeroMQ
sockets (the ``ipc`` transport: there is no network in the namespace). Nothing else of the
machine (the course folder, ``.git``, ``solutions/``, the gradebook, other kernels' files)
exists in it. It then applies the limits, drops every privilege (root mode: the pool uid, no
groups; both modes: no capabilities, ``no_new_privs``), forks the kernel and reaps every
process; when the kernel exits, init exits and the kernel of Linux ends every process left in
the namespace (a ``setsid`` daemon included). If the supervisor is killed (Jupyter's restart),
init gets ``SIGKILL`` (parent-death signal) and the same happens.

Once the kernel has created its five sockets, the supervisor remounts ``/run/kernel``
read-only inside the kernel's namespace, so the kernel cannot swap a socket for a link that
the grader would then follow. Only then does the grader send any code (it waits for the file
``ready`` in the run folder).

Before init runs anything, the supervisor puts it into a control group of its own
(:mod:`~grader.sandbox.cgroup`: cgroup v2 ``memory.max``/``pids.max``, or v1's, where the machine
lets it): the memory and process limits then hold for the kernel's whole tree, not only per
process. ``ready`` and ``status.json`` say which limits applied.

Root never acts by path inside a folder the kernel can write: the run folder is created by
the grader (0700) and handed over by file descriptor; the kernel's scratch is a tmpfs that
disappears with its namespace.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import json
import os
import signal
import socket
import sys
import time


def _load(name: str):
    """A module of the sandbox's own, by path beside this file (never through sys.path)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        f"chipsim_{name}", os.path.join(here, f"{name}.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ns = _load("ns")  # the Linux calls, the file system, init
cgroups = _load("cgroup")  # the kernel's control group: limits for its whole tree


# -- the supervisor ---------------------------------------------------------------------------
def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-dir", required=True, help="the grader's private folder (0700)")
    ap.add_argument("--mode", choices=("root", "userns"), required=True)
    ap.add_argument("--python", default=sys.executable, help="the kernel's interpreter")
    ap.add_argument("--bind-ro", action="append", default=[], help="a folder to show read-only")
    ap.add_argument("--view", action="append", default=[],
                    help="SRC:DST, a package's view and where it goes (repeatable)")  # fmt: skip
    ap.add_argument("--pythonpath", default="", help="the kernel's PYTHONPATH")
    ap.add_argument("--files", default="", help="a folder whose files start the kernel's home")
    ap.add_argument("--env", action="append", default=[], help="a variable passed to the kernel")
    ap.add_argument("--as-bytes", type=int, default=4 << 30)
    ap.add_argument("--cpu", type=int, default=900)
    ap.add_argument("--nproc", type=int, default=256)
    ap.add_argument("--fsize", type=int, default=1 << 30)
    ap.add_argument("--scratch-bytes", type=int, default=512 << 20)
    ap.add_argument("--uid-base", type=int, default=2_000_000_000)
    ap.add_argument("--uid-count", type=int, default=4096)
    ap.add_argument("--lock-dir", default="/run/chipsim-sandbox/uids")
    ap.add_argument("connection_file")
    return ap.parse_known_args(argv)  # the rest goes to the kernel (nbclient's extras)


def private_dir(path: str) -> int:
    """An fd on ``path``, which must be a real folder of ours that nobody else may write."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise SystemExit(f"chipsim-sandbox: {path} must be a folder of this user, mode 0700")
    return fd


def allocate_uid(args: argparse.Namespace) -> tuple[int, int]:
    """A uid no other kernel holds: ``(uid, fd of its lock)``. The lock lasts as long as this
    process (it is released even when the supervisor is killed)."""
    os.makedirs(args.lock_dir, mode=0o700, exist_ok=True)
    folder = private_dir(args.lock_dir)
    try:
        for slot in range(args.uid_count):
            uid = args.uid_base + slot
            fd = os.open(str(slot), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600, dir_fd=folder)  # fmt: skip
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if not _uid_has_processes(uid):  # a killed kernel's processes may still be dying
                return uid, fd
            os.close(fd)
    finally:
        os.close(folder)
    raise SystemExit(f"chipsim-sandbox: all {args.uid_count} sandbox uids are in use")


def _uid_has_processes(uid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def prepare_sockets(run: int, owner: tuple[int, int]) -> int:
    """The run folder's ``ipc/`` (the kernel's sockets): emptied and handed to ``owner``, by fd."""
    fd = os.open("ipc", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=run)
    for name in os.listdir(fd):  # a previous kernel's sockets (restart): unlink never follows
        os.unlink(name, dir_fd=fd)
    os.fchown(fd, *owner)
    os.fchmod(fd, 0o700)
    return fd


def write_status(run: int, status: dict) -> None:
    tmp = f"status.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600, dir_fd=run)
    with os.fdopen(fd, "w") as f:
        json.dump(status, f)
    os.replace(tmp, "status.json", src_dir_fd=run, dst_dir_fd=run)


def main(argv: list[str]) -> int:
    args, rest = parse(argv)
    with open(args.connection_file) as f:
        conn = json.load(f)
    if conn.get("transport") != "ipc":
        raise SystemExit("chipsim-sandbox: the kernel has no network; use the ipc transport")
    run = private_dir(args.run_dir)
    if args.mode == "root":
        if os.geteuid() != 0:
            raise SystemExit("chipsim-sandbox: --mode root needs root")
        uid, _lock = allocate_uid(args)  # _lock: held (open) until this process ends
        ids = (uid, uid)
    else:
        ids = (ns.USERNS_UID, ns.USERNS_UID)
        outside = (os.geteuid(), os.getegid())
        ns.unshare(ns.CLONE_NEWUSER)
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{ns.USERNS_UID} {outside[0]} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{ns.USERNS_UID} {outside[1]} 1")
    sockets = prepare_sockets(run, ids if args.mode == "root" else (-1, -1))
    for name in ("ready", "status.json"):  # a previous kernel's (restart)
        try:
            os.unlink(name, dir_fd=run)
        except FileNotFoundError:
            pass
    try:
        os.mkdir("root", 0o700, dir_fd=run)  # init's mount point for the kernel's root
    except FileExistsError:
        pass
    ns.unshare(ns.CLONE_NEWPID)  # our next child is pid 1 of a new PID namespace
    lifeline_r, lifeline_w = os.pipe()
    status_r, status_w = os.pipe()
    go_r, go_w = os.pipe()  # init waits until it is in the kernel's control group
    ns_parent, ns_child = socket.socketpair()  # init sends its mount namespace through it
    group = cgroups.create(f"chipsim-k-{os.getpid()}", memory_bytes=args.as_bytes, pids=args.nproc)
    started = time.monotonic()  # wall time, for the feedback only
    child = os.fork()
    if child == 0:
        os.close(lifeline_w)
        os.close(status_r)
        os.close(go_w)
        ns_parent.close()
        try:
            if os.read(go_r, 1) != b"g":
                raise OSError("the supervisor did not start the kernel")
            os.close(go_r)
            ns.sandbox_init(args, rest, conn, ids, sockets, lifeline_r, status_w, ns_child)
        except BaseException as exc:  # report why the sandbox could not start, then die
            os.write(status_w, json.dumps({"setup_error": str(exc)[:2000]}).encode())
        os._exit(70)
    os.close(lifeline_r)
    os.close(status_w)
    os.close(go_r)
    ns_child.close()
    try:
        group.add(child)  # init, and so every process the kernel will start
    except OSError as exc:
        os.write(2, f"chipsim-sandbox: control group not used: {exc}\n".encode())
        group = cgroups.Group("none", [], args.as_bytes, args.nproc)
    os.write(go_w, b"g")
    os.close(go_w)
    forwarded: list[int] = []

    def forward(signum: int, _frame) -> None:
        forwarded.append(signum)
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for sig in ns.FORWARDED:
        signal.signal(sig, forward)
    try:  # init's mount namespace, to lock the sockets later (init is not ptrace-able then)
        _, fds, _, _ = socket.recv_fds(ns_parent, 16, 1)
    except OSError:
        fds = []
    ns_parent.close()
    status = supervise(child, conn, sockets, run, fds[0] if fds else None, group.describe())
    report = _read_all(status_r)
    status["cgroup"], status["oom_killed"] = group.describe(), group.out_of_memory()
    group.remove()
    try:
        status.update(json.loads(report or "{}"))
    except ValueError:
        status["setup_error"] = "init sent a garbled status"
    status.update(wall_s=round(time.monotonic() - started, 3), forwarded=forwarded, uid=ids[0])
    status["limits"] = {"cpu_s": args.cpu, "as_bytes": args.as_bytes, "nproc": args.nproc,
                        "fsize": args.fsize, "scratch_bytes": args.scratch_bytes}  # fmt: skip
    write_status(run, status)
    if status.get("signal"):
        return 128 + int(status["signal"])
    return int(status.get("exit_code") or 0)


def supervise(
    child: int, conn: dict, sockets: int, run: int, mnt_ns: int | None, limits: str = ""
) -> dict:
    """Wait for init; meanwhile, once the kernel's sockets exist, make them read-only inside
    and tell the grader (``ready`` in the run folder, holding ``limits``: what bounds the
    kernel's memory and processes): it sends no code before that."""
    names = {f"{os.path.basename(conn['ip'])}-{conn[k]}" for k in
             ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")}  # fmt: skip
    locked = False
    while True:
        try:
            pid, wstatus = os.waitpid(child, 0 if locked else os.WNOHANG)
        except ChildProcessError:
            return {"setup_error": "init vanished"}
        if pid == child:
            return {"init_exit": os.waitstatus_to_exitcode(wstatus)}
        if not locked and names <= set(os.listdir(sockets)):
            locked = True
            if mnt_ns is not None and _remount_sockets_readonly(mnt_ns):
                fd = os.open("ready", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600, dir_fd=run)
                os.write(fd, limits.encode())
                os.close(fd)
            else:
                os.kill(child, signal.SIGKILL)  # never leave a kernel with swappable sockets
        if not locked:
            time.sleep(0.02)


def _remount_sockets_readonly(mnt_ns: int) -> bool:
    """In a short-lived helper that enters init's mount namespace: ``/run/kernel`` read-only."""
    helper = os.fork()
    if helper == 0:
        try:
            ns.setns(mnt_ns, ns.CLONE_NEWNS)
            ns.remount_readonly(ns.SOCKETS, ns.MS_NOEXEC)
            os._exit(0)
        except BaseException as exc:
            os.write(2, f"chipsim-sandbox: cannot lock the kernel's sockets: {exc}\n".encode())
            os._exit(1)
    _, wstatus = os.waitpid(helper, 0)
    return os.waitstatus_to_exitcode(wstatus) == 0


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
